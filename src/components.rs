//! Views, one per file. They render data from `model` and strings from `i18n`; they never
//! render model output, titles, snippets or URLs as HTML.

pub mod answer;
pub mod citation_link;
pub mod composer;
pub mod conversation;
pub mod erase;
pub mod history;
pub mod icons;
pub mod research;
pub mod service_status;
pub mod settings;
pub mod workspace;

use leptos::prelude::*;

use crate::i18n::Texts;
use crate::model::Lang;

/// The UI language of the current page (zh-CN unless the app provided another).
pub fn use_lang() -> Lang {
    use_context::<Lang>().unwrap_or_default()
}

/// The strings of the current UI language.
pub fn use_texts() -> &'static Texts {
    use_lang().texts()
}

/// What covers part of the page, if anything: the filters' popover, the settings dialog
/// (a sheet on phones) or the history drawer (phones). One at a time; Escape closes it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Overlay {
    Filters,
    Settings,
    History,
}

/// Opens `which`, or closes it when it is the one open.
pub fn toggle_overlay(overlay: RwSignal<Option<Overlay>>, which: Overlay) {
    overlay.update(|open| {
        *open = if *open == Some(which) {
            None
        } else {
            Some(which)
        }
    });
}

/// The head of a panel that is a sheet or a drawer on phones: its title and the button
/// that closes it (only when the page gave one).
#[component]
pub fn PanelHead(title: &'static str, close: Option<Callback<()>>) -> impl IntoView {
    let t = use_texts();
    close.map(|close| {
        view! {
            <div class="panel-head">
                <h2 class="panel-title">{title}</h2>
                <button type="button" class="panel-close" on:click=move |_| close.run(())>{t.close}</button>
            </div>
        }
    })
}
