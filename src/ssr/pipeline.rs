//! One answer's lifecycle, shared by every mode.
//!
//! The modes (`chat`, `agent`, `research`) are `async fn run(&mut Turn) -> Result<(), Halted>`
//! built from a [`Turn`]'s named steps: status, notice, step, search, register a round,
//! stream the model, fail. Stopping (the stop button, a `/reset`, the server shutting
//! down) is one error, [`Halted`], carried by `?`; the turn's `finish` records it and saves
//! whatever was written.
//!
//! - [`turn`]: the `Turn` itself (private fields, one file per part of its life);
//! - [`search`]: the [`Searcher`], the one way an answer searches (Research branches too);
//! - [`related`]: follow-up questions from a reply or from the sources.
//!
//! Reading a model's stream lives in [`crate::ssr::llm::reply`].

pub mod related;
pub mod search;
mod turn;

pub use crate::ssr::llm::reply::Halted;
pub use search::{CacheUse, Searcher};
pub use turn::Turn;

use crate::model::{Lang, Mode};

/// What the person asked, and how.
#[derive(Debug, Clone)]
pub struct TurnInput {
    pub id: u64,
    pub question: String,
    /// Chat mode's search switch (Agent and Research decide themselves).
    pub search_enabled: bool,
    /// The UI language, for statuses and notices (the answer follows the question).
    pub lang: Lang,
    pub mode: Mode,
    /// Agent: search first whatever the model would do ("搜索后重答").
    pub force_search: bool,
    /// Web searches look only at this site (`cited ask --site`).
    pub site: Option<String>,
    /// The picked model (`endpoint|model`); `None`: the default.
    pub model: Option<String>,
    /// Files searched alongside the web besides the conversation's own (`cited ask --file`).
    pub files: Vec<crate::ssr::knowledge::Document>,
}

impl TurnInput {
    /// A question answered on its own (the API, `cited eval`): searching, in the
    /// question's language.
    pub fn standalone(question: String, mode: Mode) -> TurnInput {
        TurnInput {
            id: 1,
            lang: Lang::of_text(&question),
            question,
            search_enabled: true,
            mode,
            force_search: false,
            site: None,
            model: None,
            files: Vec::new(),
        }
    }
}

/// How an answer's citation numbers are owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// Chat: 1..n for this answer only; `exchange.sources` is the whole list.
    PerAnswer,
    /// Agent and Research: the session's registry; the answer lists what it retrieved and
    /// any older number it cites.
    Session,
}
