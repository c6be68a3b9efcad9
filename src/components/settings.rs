//! The settings panel (seed 003 聊天设置面板): the mode radio group and the search switch.
//! A sidebar on wide screens; on phones the mode and the switch stay in a bar of compact
//! chips above the conversation and the rest is a sheet behind "设置"; never covered by
//! messages. Every change is saved in the session and confirmed on screen.

use std::time::Duration;

use leptos::prelude::*;

use crate::components::service_status::SearchStatus;
use crate::components::{use_lang, use_texts, PanelHead};
use crate::model::Lang;
use crate::model::{Focus, Mode, Period, Settings, Sources};
use crate::server_fns::{list_models, UpdateSettings};

/// What a settings change was about, for its confirmation.
#[derive(Clone)]
enum Change {
    Mode(Mode),
    Search,
    Sources(Sources),
    Lang,
    Focus(Focus),
    Period(Option<Period>),
    /// The picked model's label.
    Model(String),
    Site,
}

fn sources_name(t: &'static crate::i18n::Texts, sources: Sources) -> &'static str {
    match sources {
        Sources::Auto => t.sources_auto,
        Sources::Web => t.sources_web,
        Sources::Knowledge => t.sources_knowledge,
        Sources::Both => t.sources_both,
    }
}

/// Native radios drawn as a segmented control (the mode and the sources).
fn segments<T>(
    name: &'static str,
    options: impl IntoIterator<Item = T>,
    value_of: fn(T) -> &'static str,
    label_of: impl Fn(T) -> &'static str,
    current: impl Fn() -> T + Copy + Send + Sync + 'static,
    choose: impl Fn(T) + Copy + Send + Sync + 'static,
) -> impl IntoView
where
    T: Copy + PartialEq + Send + Sync + 'static,
{
    options
        .into_iter()
        .map(|option| {
            view! {
                <label class="mode">
                    <input
                        type="radio"
                        name=name
                        value=value_of(option)
                        prop:checked=move || current() == option
                        checked=current() == option
                        on:change=move |_| choose(option)
                    />
                    <span>{label_of(option)}</span>
                </label>
            }
        })
        .collect_view()
}

/// An update that changes nothing; each change fills in its one field.
fn blank() -> UpdateSettings {
    UpdateSettings {
        mode: None,
        search_enabled: None,
        sources: None,
        lang: None,
        focus: None,
        period: None,
        site: None,
        model: None,
    }
}

/// How long a confirmation stays visible.
const CONFIRMATION_MS: u64 = 4000;

#[component]
pub fn SettingsPanel(
    settings: RwSignal<Settings>,
    /// On phones the panel is a sheet; this closes it.
    #[prop(optional)]
    close: Option<Callback<()>>,
) -> impl IntoView {
    let t = use_texts();
    let lang = use_lang();
    let save = ServerAction::<UpdateSettings>::new();
    let confirmation = RwSignal::new(String::new());
    // Each confirmation gets a number, so an older timer never clears a newer message.
    let confirmation_seq = StoredValue::new(0u64);
    // What the last change was about; the action's own input is gone once it resolves.
    let last_change = StoredValue::new(Change::Search);

    Effect::new(move |_| {
        let Some(result) = save.value().get() else {
            return;
        };
        let message = match result {
            Ok(saved) => {
                settings.set(saved.clone());
                match last_change.get_value() {
                    Change::Mode(mode) => format!("{} {}", t.mode_confirmed, lang.mode_name(mode)),
                    Change::Search if saved.search_enabled => t.search_on_confirmed.to_string(),
                    Change::Search => t.search_off_confirmed.to_string(),
                    Change::Sources(sources) => t
                        .sources_confirmed
                        .replace("{sources}", sources_name(t, sources)),
                    Change::Focus(focus) => t
                        .focus_confirmed
                        .replace("{focus}", crate::i18n::focus_name(focus, t)),
                    Change::Period(period) => t.period_confirmed.replace(
                        "{period}",
                        period.map_or(t.period_any, |p| crate::i18n::period_name(p, t)),
                    ),
                    Change::Model(label) => t.model_confirmed.replace("{model}", &label),
                    Change::Site => match &saved.site {
                        Some(site) => t.site_confirmed.replace("{site}", site),
                        None => t.site_cleared.to_string(),
                    },
                    Change::Lang => {
                        // Every string on the page changes: render it again in the new language.
                        let _ = window().location().reload();
                        return;
                    }
                }
            }
            Err(error) => format!("{}: {error}", t.save_failed),
        };
        confirmation_seq.update_value(|seq| *seq += 1);
        let seq = confirmation_seq.get_value();
        confirmation.set(message);
        set_timeout(
            move || {
                if confirmation_seq.get_value() == seq {
                    confirmation.set(String::new());
                }
            },
            Duration::from_millis(CONFIRMATION_MS),
        );
    });

    let choose_mode = move |mode: Mode| {
        settings.update(|settings| settings.mode = mode);
        last_change.set_value(Change::Mode(mode));
        save.dispatch(UpdateSettings {
            mode: Some(mode),
            ..blank()
        });
    };
    let toggle_search = move |enabled: bool| {
        settings.update(|settings| settings.search_enabled = enabled);
        last_change.set_value(Change::Search);
        save.dispatch(UpdateSettings {
            search_enabled: Some(enabled),
            ..blank()
        });
    };
    let choose_sources = move |sources: Sources| {
        settings.update(|settings| settings.sources = Some(sources));
        last_change.set_value(Change::Sources(sources));
        save.dispatch(UpdateSettings {
            sources: Some(sources),
            ..blank()
        });
    };
    let choose_lang = move |chosen: Lang| {
        if chosen == lang {
            return;
        }
        last_change.set_value(Change::Lang);
        save.dispatch(UpdateSettings {
            lang: Some(chosen.code().to_string()),
            ..blank()
        });
    };
    let sources = move || settings.get().sources.unwrap_or_default();
    let choose_focus = move |focus: Focus| {
        settings.update(|settings| settings.focus = focus);
        last_change.set_value(Change::Focus(focus));
        save.dispatch(UpdateSettings {
            focus: Some(focus),
            ..blank()
        });
    };
    let focus = move || settings.get().focus;
    let choose_period = move |period: Option<Period>| {
        settings.update(|settings| settings.period = period);
        last_change.set_value(Change::Period(period));
        save.dispatch(UpdateSettings {
            period: Some(period.map_or("any", Period::as_str).to_string()),
            ..blank()
        });
    };

    let choose_site = move |raw: String| {
        last_change.set_value(Change::Site);
        // An empty field is not sent by forms: `any` lifts the limit.
        let raw = if raw.trim().is_empty() {
            "any".to_string()
        } else {
            raw
        };
        save.dispatch(UpdateSettings {
            site: Some(raw),
            ..blank()
        });
    };
    // Listed once the page runs in the browser (an endpoint may take seconds to answer),
    // so the first HTML never waits for it; none offline.
    let models = RwSignal::new(None::<crate::model::ModelChoices>);
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            if let Ok(choices) = list_models().await {
                models.set(Some(choices));
            }
        });
    });
    let choose_model = move |id: String, label: String| {
        settings.update(|settings| settings.model = Some(id.clone()));
        last_change.set_value(Change::Model(label));
        save.dispatch(UpdateSettings {
            model: Some(id),
            ..blank()
        });
    };
    let model_picker = move || {
        let choices = models.get().filter(|choices| !choices.options.is_empty())?;
        let fallback = choices.current.clone();
        let offered = choices.options.clone();
        let current = move || {
            settings
                .get()
                .model
                .filter(|id| offered.iter().any(|option| &option.id == id))
                .or_else(|| fallback.clone())
                .unwrap_or_default()
        };
        let first = current.clone()();
        let options = choices.options.clone();
        Some(view! {
            <div class="field model-field">
                <label class="field-label" for="model">{t.model_label}</label>
                <select
                    id="model"
                    class="language"
                    prop:value=current
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        let label = options
                            .iter()
                            .find(|option| option.id == id)
                            .map_or_else(|| id.clone(), |option| option.label.clone());
                        choose_model(id, label);
                    }
                >
                    {choices
                        .options
                        .into_iter()
                        .map(|option| {
                            let selected = option.id == first;
                            view! { <option value=option.id selected=selected>{option.label}</option> }
                        })
                        .collect_view()}
                </select>
            </div>
        })
    };

    let mode = move || settings.get().mode;
    let switch_note = move || match mode() {
        Mode::Chat => t.search_switch_help,
        Mode::Agent => t.search_switch_auto,
        Mode::Research => t.search_switch_auto_research,
    };

    view! {
        <aside class="settings" id="settings-panel" aria-label=t.settings>
            <PanelHead title=t.settings close/>
            <div class="field mode-field">
                <span class="field-label" id="mode-label">{t.mode}</span>
                <div class="modes" role="radiogroup" aria-labelledby="mode-label">
                    {segments("mode", Mode::ALL, Mode::as_str, move |m| lang.mode_name(m), mode, choose_mode)}
                </div>
            </div>
            <div class="field switch-field" class:disabled=move || !mode().has_search_switch()>
                <input
                    type="checkbox"
                    role="switch"
                    id="search-switch"
                    class="switch"
                    aria-describedby="search-switch-note"
                    prop:checked=move || settings.get().search_enabled
                    checked=settings.get_untracked().search_enabled
                    prop:disabled=move || !mode().has_search_switch()
                    disabled=!settings.get_untracked().mode.has_search_switch()
                    on:change=move |ev| toggle_search(event_target_checked(&ev))
                />
                <label for="search-switch" class="switch-label">
                    <span class="switch-icon" aria-hidden="true">"🔍"</span>
                    <span class="switch-text">{t.search_switch}</span>
                </label>
                <p class="field-note" id="search-switch-note">{switch_note}</p>
            </div>
            <div class="field sources-field">
                <span class="field-label" id="sources-label">{t.sources_label}</span>
                <div class="modes sources" role="radiogroup" aria-labelledby="sources-label" aria-describedby="sources-note">
                    {segments("sources", Sources::ALL, Sources::as_str, move |o| sources_name(t, o), sources, choose_sources)}
                </div>
                <p class="field-note" id="sources-note">{t.sources_help}</p>
            </div>
            <div class="field focus-field">
                <span class="field-label" id="focus-label">{t.focus_label}</span>
                <div class="modes focus" role="radiogroup" aria-labelledby="focus-label">
                    {segments("focus", Focus::ALL, Focus::as_str, move |f| crate::i18n::focus_name(f, t), focus, choose_focus)}
                </div>
            </div>
            <div class="field period-field">
                <label class="field-label" for="period">{t.period_label}</label>
                <select
                    id="period"
                    class="language"
                    on:change=move |ev| {
                        let raw = event_target_value(&ev);
                        choose_period(Period::parse(&raw));
                    }
                >
                    <option value="any" selected=settings.get_untracked().period.is_none()>{t.period_any}</option>
                    {Period::ALL
                        .into_iter()
                        .map(|option| {
                            view! {
                                <option
                                    value=option.as_str()
                                    selected=settings.get_untracked().period == Some(option)
                                >
                                    {crate::i18n::period_name(option, t)}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <div class="field site-field">
                <label class="field-label" for="site">{t.site_label}</label>
                <input
                    id="site"
                    type="text"
                    class="site"
                    inputmode="url"
                    autocomplete="off"
                    spellcheck="false"
                    placeholder="example.org"
                    maxlength="253"
                    aria-describedby="site-note"
                    prop:value=move || settings.get().site.unwrap_or_default()
                    value=settings.get_untracked().site.unwrap_or_default()
                    on:change=move |ev| choose_site(event_target_value(&ev))
                />
                <p class="field-note" id="site-note">{t.site_help}</p>
            </div>
            {model_picker}
            <div class="field language-field">
                <label class="field-label" for="language">{t.language_label}</label>
                <select
                    id="language"
                    class="language"
                    on:change=move |ev| {
                        if let Some(chosen) = Lang::parse(&event_target_value(&ev)) {
                            choose_lang(chosen);
                        }
                    }
                >
                    {Lang::ALL
                        .into_iter()
                        .map(|option| {
                            view! {
                                <option value=option.code() selected=option == lang>{option.name()}</option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <p class="confirmation" class:shown=move || !confirmation.with(String::is_empty) aria-live="polite">
                {move || confirmation.get()}
            </p>
            <SearchStatus/>
        </aside>
    }
}
