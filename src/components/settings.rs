//! The settings panel (seed 003 聊天设置面板): the mode radio group and the search switch.
//! A sidebar on wide screens, a bar above the conversation on phones; never covered by
//! messages. Every change is saved in the session and confirmed on screen.

use std::time::Duration;

use leptos::prelude::*;

use crate::components::service_status::SearchStatus;
use crate::components::{use_lang, use_texts};
use crate::model::{Mode, Settings};
use crate::server_fns::UpdateSettings;

/// How long a confirmation stays visible.
const CONFIRMATION_MS: u64 = 4000;

#[component]
pub fn SettingsPanel(settings: RwSignal<Settings>) -> impl IntoView {
    let t = use_texts();
    let lang = use_lang();
    let save = ServerAction::<UpdateSettings>::new();
    let confirmation = RwSignal::new(String::new());
    // Each confirmation gets a number, so an older timer never clears a newer message.
    let confirmation_seq = StoredValue::new(0u64);
    // What the last change was about; the action's own input is gone once it resolves.
    let last_change = StoredValue::new(None::<Mode>);

    Effect::new(move |_| {
        let Some(result) = save.value().get() else {
            return;
        };
        let message = match result {
            Ok(saved) => {
                settings.set(saved);
                match last_change.get_value() {
                    Some(mode) => format!("{} {}", t.mode_confirmed, lang.mode_name(mode)),
                    None if saved.search_enabled => t.search_on_confirmed.to_string(),
                    None => t.search_off_confirmed.to_string(),
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
        last_change.set_value(Some(mode));
        save.dispatch(UpdateSettings {
            mode: Some(mode),
            search_enabled: None,
        });
    };
    let toggle_search = move |enabled: bool| {
        settings.update(|settings| settings.search_enabled = enabled);
        last_change.set_value(None);
        save.dispatch(UpdateSettings {
            mode: None,
            search_enabled: Some(enabled),
        });
    };

    let mode = move || settings.get().mode;
    let switch_note = move || match mode() {
        Mode::Chat => t.search_switch_help,
        Mode::Agent => t.search_switch_auto,
        Mode::Research => t.search_switch_auto_research,
    };

    view! {
        <aside class="settings" aria-label=t.settings>
            <div class="field">
                <span class="field-label" id="mode-label">{t.mode}</span>
                <div class="modes" role="radiogroup" aria-labelledby="mode-label">
                    {Mode::ALL
                        .into_iter()
                        .map(|option| {
                            view! {
                                <label class="mode">
                                    <input
                                        type="radio"
                                        name="mode"
                                        value=option.as_str()
                                        prop:checked=move || mode() == option
                                        checked=mode() == option
                                        on:change=move |_| choose_mode(option)
                                    />
                                    <span>{lang.mode_name(option)}</span>
                                </label>
                            }
                        })
                        .collect_view()}
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
                    {t.search_switch}
                </label>
                <p class="field-note" id="search-switch-note">{switch_note}</p>
            </div>
            <p class="confirmation" aria-live="polite">{move || confirmation.get()}</p>
            <SearchStatus/>
        </aside>
    }
}
