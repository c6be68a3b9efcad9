//! Views, one per file. They render data from `model` and strings from `i18n`; they never
//! render model output, titles, snippets or URLs as HTML.

pub mod answer;
pub mod citation_link;
pub mod composer;
pub mod conversation;
pub mod history;
pub mod research;
pub mod service_status;
pub mod settings;
pub mod workspace;

use leptos::prelude::use_context;

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
