//! The settings (seed 003 聊天设置面板). What people change per question sits in a compact
//! row by the question box: the mode, the search switch, the focus, the model, "筛选" (time
//! range and site, in a popover that shows when one is set) and "设置". What people set once
//! (sources, language, SearXNG's status) is in the settings dialog "设置" opens (a sheet on
//! phones). Without JavaScript the dialog and the filters stay in view instead. Every change
//! is saved in the session and confirmed on screen.

use std::time::Duration;

use leptos::prelude::*;

use crate::components::icons::SearchIcon;
use crate::components::service_status::SearchStatus;
use crate::components::{toggle_overlay, use_lang, use_texts, Overlay, PanelHead};
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

/// Saves settings changes in the session and confirms each on screen; shared by the row
/// by the question box and the settings dialog.
#[derive(Clone, Copy)]
pub struct Saver {
    pub settings: RwSignal<Settings>,
    save: ServerAction<UpdateSettings>,
    /// What the last change was about; the action's own input is gone once it resolves.
    last_change: StoredValue<Change>,
    confirmation: RwSignal<String>,
}

impl Saver {
    pub fn new(settings: RwSignal<Settings>) -> Saver {
        let t = use_texts();
        let lang = use_lang();
        let save = ServerAction::<UpdateSettings>::new();
        let confirmation = RwSignal::new(String::new());
        // Each confirmation gets a number, so an older timer never clears a newer message.
        let confirmation_seq = StoredValue::new(0u64);
        let last_change = StoredValue::new(Change::Search);
        Effect::new(move |_| {
            let Some(result) = save.value().get() else {
                return;
            };
            let message = match result {
                Ok(saved) => {
                    settings.set(saved.clone());
                    match last_change.get_value() {
                        Change::Mode(mode) => {
                            format!("{} {}", t.mode_confirmed, lang.mode_name(mode))
                        }
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
                            // Every string on the page changes: render it again in the new
                            // language.
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
        Saver {
            settings,
            save,
            last_change,
            confirmation,
        }
    }

    /// Sends one change (`update` fills in its one field).
    fn send(&self, change: Change, update: UpdateSettings) {
        self.last_change.set_value(change);
        self.save.dispatch(update);
    }

    fn mode(&self, mode: Mode) {
        self.settings.update(|settings| settings.mode = mode);
        let update = UpdateSettings {
            mode: Some(mode),
            ..blank()
        };
        self.send(Change::Mode(mode), update);
    }

    fn search(&self, enabled: bool) {
        self.settings
            .update(|settings| settings.search_enabled = enabled);
        let update = UpdateSettings {
            search_enabled: Some(enabled),
            ..blank()
        };
        self.send(Change::Search, update);
    }

    fn sources(&self, sources: Sources) {
        self.settings
            .update(|settings| settings.sources = Some(sources));
        let update = UpdateSettings {
            sources: Some(sources),
            ..blank()
        };
        self.send(Change::Sources(sources), update);
    }

    fn lang(&self, chosen: Lang) {
        let update = UpdateSettings {
            lang: Some(chosen.code().to_string()),
            ..blank()
        };
        self.send(Change::Lang, update);
    }

    fn focus(&self, focus: Focus) {
        self.settings.update(|settings| settings.focus = focus);
        let update = UpdateSettings {
            focus: Some(focus),
            ..blank()
        };
        self.send(Change::Focus(focus), update);
    }

    fn period(&self, period: Option<Period>) {
        self.settings.update(|settings| settings.period = period);
        let update = UpdateSettings {
            period: Some(period.map_or("any", Period::as_str).to_string()),
            ..blank()
        };
        self.send(Change::Period(period), update);
    }

    fn site(&self, raw: String) {
        // An empty field is not sent by forms: `any` lifts the limit.
        let raw = if raw.trim().is_empty() {
            "any".to_string()
        } else {
            raw
        };
        let update = UpdateSettings {
            site: Some(raw),
            ..blank()
        };
        self.send(Change::Site, update);
    }

    fn model(&self, id: String, label: String) {
        self.settings
            .update(|settings| settings.model = Some(id.clone()));
        let update = UpdateSettings {
            model: Some(id),
            ..blank()
        };
        self.send(Change::Model(label), update);
    }
}

/// The model picker, once the endpoints' models are listed (none offline).
fn model_picker(saver: Saver) -> impl IntoView {
    let t = use_texts();
    let settings = saver.settings;
    // Listed once the page runs in the browser (an endpoint may take seconds to answer),
    // so the first HTML never waits for it.
    let models = RwSignal::new(None::<crate::model::ModelChoices>);
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            if let Ok(choices) = list_models().await {
                models.set(Some(choices));
            }
        });
    });
    move || {
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
                        saver.model(id, label);
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
    }
}

/// The row by the question box: what people change per question.
#[component]
pub fn QuestionOptions(
    saver: Saver,
    /// What covers the page: the filters' popover and the settings dialog are two of them.
    overlay: RwSignal<Option<Overlay>>,
) -> impl IntoView {
    let t = use_texts();
    let lang = use_lang();
    let settings = saver.settings;
    let mode = move || settings.get().mode;
    let switch_note = move || match mode() {
        Mode::Chat => t.search_switch_help,
        Mode::Agent => t.search_switch_auto,
        Mode::Research => t.search_switch_auto_research,
    };
    let toggle = move |which: Overlay| toggle_overlay(overlay, which);
    let expanded = move |which: Overlay| move || (overlay.get() == Some(which)).to_string();
    // The filters in force, shown on the button ("筛选 · 一周内 · docs.rs").
    let active = move || {
        let settings = settings.get();
        let mut parts = Vec::new();
        if let Some(period) = settings.period {
            parts.push(crate::i18n::period_name(period, t).to_string());
        }
        if let Some(site) = settings.site {
            parts.push(site);
        }
        parts
    };
    view! {
        <div class="ask-options">
            <div class="field mode-field">
                <span class="field-label" id="mode-label">{t.mode}</span>
                <div class="modes" role="radiogroup" aria-labelledby="mode-label">
                    {segments("mode", Mode::ALL, Mode::as_str, move |m| lang.mode_name(m), mode, move |m| saver.mode(m))}
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
                    on:change=move |ev| saver.search(event_target_checked(&ev))
                />
                <label for="search-switch" class="switch-label">
                    <span class="switch-icon"><SearchIcon/></span>
                    <span class="switch-text">{t.search_switch}</span>
                </label>
            </div>
            <div class="field focus-field">
                <label class="field-label" for="focus">{t.focus_label}</label>
                <select
                    id="focus"
                    class="language"
                    on:change=move |ev| {
                        if let Some(focus) = Focus::parse(&event_target_value(&ev)) {
                            saver.focus(focus);
                        }
                    }
                >
                    {Focus::ALL
                        .into_iter()
                        .map(|option| {
                            view! {
                                <option
                                    value=option.as_str()
                                    selected=settings.get_untracked().focus == option
                                >
                                    {crate::i18n::focus_name(option, t)}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            {model_picker(saver)}
            <div class="filters">
                <button
                    type="button"
                    class="option-button filters-button"
                    class:active=move || !active().is_empty()
                    aria-controls="filters-panel"
                    aria-expanded=expanded(Overlay::Filters)
                    on:click=move |_| toggle(Overlay::Filters)
                >
                    {t.filters}
                    {move || {
                        let parts = active();
                        (!parts.is_empty()).then(|| view! {
                            <span class="filters-active">{format!(" · {}", parts.join(" · "))}</span>
                        })
                    }}
                </button>
                <div
                    id="filters-panel"
                    class="filters-panel"
                    role="group"
                    aria-label=t.filters
                    class:open=move || overlay.get() == Some(Overlay::Filters)
                >
                    <div class="field period-field">
                        <label class="field-label" for="period">{t.period_label}</label>
                        <select
                            id="period"
                            class="language"
                            on:change=move |ev| saver.period(Period::parse(&event_target_value(&ev)))
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
                            on:change=move |ev| saver.site(event_target_value(&ev))
                        />
                        <p class="field-note" id="site-note">{t.site_help}</p>
                    </div>
                </div>
            </div>
            <button
                type="button"
                class="option-button settings-button"
                aria-controls="settings-panel"
                aria-expanded=expanded(Overlay::Settings)
                on:click=move |_| toggle(Overlay::Settings)
            >
                {t.settings}
            </button>
            <p class="ask-note" id="search-switch-note">{switch_note}</p>
            <p class="confirmation" class:shown=move || !saver.confirmation.with(String::is_empty) aria-live="polite">
                {move || saver.confirmation.get()}
            </p>
        </div>
    }
}

/// The settings dialog: what people set once.
#[component]
pub fn SettingsPanel(
    saver: Saver,
    /// Closes the dialog (or the sheet on phones).
    close: Callback<()>,
) -> impl IntoView {
    let t = use_texts();
    let lang = use_lang();
    let settings = saver.settings;
    let sources = move || settings.get().sources.unwrap_or_default();
    view! {
        <aside class="settings" id="settings-panel" role="dialog" aria-label=t.settings>
            <PanelHead title=t.settings close=Some(close)/>
            <div class="field sources-field">
                <span class="field-label" id="sources-label">{t.sources_label}</span>
                <div class="modes sources" role="radiogroup" aria-labelledby="sources-label" aria-describedby="sources-note">
                    {segments("sources", Sources::ALL, Sources::as_str, move |o| sources_name(t, o), sources, move |s| saver.sources(s))}
                </div>
                <p class="field-note" id="sources-note">{t.sources_help}</p>
            </div>
            <div class="field language-field">
                <label class="field-label" for="language">{t.language_label}</label>
                <select
                    id="language"
                    class="language"
                    on:change=move |ev| {
                        if let Some(chosen) = Lang::parse(&event_target_value(&ev)) {
                            if chosen != lang {
                                saver.lang(chosen);
                            }
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
            <SearchStatus/>
        </aside>
    }
}
