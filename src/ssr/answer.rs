//! One answer, whatever the mode and whoever asks. [`start`] is the one way an answer
//! begins: the web (`/api/ask`), the OpenAI-compatible API, `cited ask` and `cited eval`
//! all call it with a [`Question`] already parsed. It admits the answer (the rate limits and
//! the quota for people and keys; one answer at a time per session; per browser across
//! instances when the events go to the browser's answer log), tracks the task so shutdown
//! waits for it, and runs it: [`run`] begins a [`Turn`], runs the session's mode on it, and
//! finishes it (saved, `Done` sent) however the mode ended.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::i18n::Texts;
use crate::model::{AnswerEvent, Exchange, Mode};
use crate::ssr::pipeline::{Turn, TurnInput};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;
use crate::ssr::{agent, chat, research};

pub async fn run(
    state: AppState,
    session: Arc<Session>,
    input: TurnInput,
    cancel: CancellationToken,
    events: mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let mode = input.mode;
    // A server shutting down stops the answer, which is then saved as stopped.
    let stop_on_shutdown = {
        let shutdown = state.shutdown.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            cancel.cancel();
        })
    };
    let tracked = state.answers.token();
    let mut turn = Turn::begin(state, session, input, cancel, events).await;
    let outcome = match turn.admit().await {
        Err(halted) => Err(halted),
        Ok(_slots) => match mode {
            Mode::Chat => chat::run(&mut turn).await,
            Mode::Agent => agent::run(&mut turn).await,
            Mode::Research => research::run(&mut turn).await,
        },
    };
    let exchange = turn.finish(outcome).await;
    stop_on_shutdown.abort();
    drop(tracked);
    exchange
}

/// A question as cited takes it: trimmed, neither empty nor longer than the limit
/// (`CITED_MAX_QUESTION_CHARS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question(String);

/// Why a question is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionError {
    Empty,
    TooLong { length: usize, max: usize },
}

impl QuestionError {
    /// What the person is told, in `t`'s language.
    pub fn message(self, t: &Texts) -> String {
        match self {
            QuestionError::Empty => t.empty_question.to_string(),
            QuestionError::TooLong { length, max } => t
                .question_too_long
                .replace("{max}", &max.to_string())
                .replace("{len}", &length.to_string()),
        }
    }
}

impl Question {
    pub fn parse(raw: &str, max: usize) -> Result<Question, QuestionError> {
        let question = raw.trim();
        let length = question.chars().count();
        if length == 0 {
            Err(QuestionError::Empty)
        } else if length > max {
            Err(QuestionError::TooLong { length, max })
        } else {
            Ok(Question(question.to_string()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// Why an answer cannot start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over the rate (`CITED_RATE_ASKS_PER_MIN`); try again after this long.
    TooFast(Duration),
    /// The owner's stored conversations reached `CITED_USER_QUOTA_MB`.
    QuotaFull,
    /// Another answer of the session (or, logged, of the browser) is still running.
    Busy,
    /// The conversation holds `max` questions already (`CITED_MAX_EXCHANGES`): a new chat.
    ConversationFull { max: usize },
}

/// Who asks, for the rate limits and the quota: a user, a browser or a key (`owner`), and
/// the address it asks from.
pub struct Asker {
    pub owner: String,
    pub address: Option<std::net::IpAddr>,
}

/// Where an answer's events go.
pub enum Delivery {
    /// Straight to the caller.
    Direct,
    /// Into the browser's answer log (`ssr::live`): it goes on when the caller goes away,
    /// and a refresh, another tab or another instance can follow it. The caller follows it
    /// from the start.
    Logged { browser: String },
}

/// The answer's events, in order, ending with the answer.
pub type Events = Pin<Box<dyn Stream<Item = AnswerEvent> + Send>>;

/// An answer that started.
pub struct Running {
    pub events: Events,
    /// Stops it (the stop button, a client gone, a deadline).
    pub cancel: CancellationToken,
    /// The exchange as it ended.
    pub done: tokio::task::JoinHandle<Exchange>,
}

/// Starts an answer to `input` in `session`: `asker`'s limits first (none for the command
/// line and evaluation), then one answer at a time per session (and per browser across
/// instances when logged); the answer's id is the session's next.
pub async fn start(
    state: &AppState,
    session: Arc<Session>,
    mut input: TurnInput,
    asker: Option<Asker>,
    delivery: Delivery,
) -> Result<Running, Refusal> {
    if let Some(asker) = asker {
        use crate::ssr::request::{may_ask, Refused};
        match may_ask(state, &asker.owner, asker.address).await {
            Ok(()) => {}
            Err(Refused::TooFast(wait)) => return Err(Refusal::TooFast(wait)),
            Err(Refused::QuotaFull) => return Err(Refusal::QuotaFull),
        }
    }
    // A conversation is loaded whole on every open: it has a size it may not pass.
    let max = state.config.capacity.exchanges_per_conversation;
    if session.conversation_id().is_some()
        && usize::try_from(session.next_seq()).unwrap_or(usize::MAX) >= max
    {
        return Err(Refusal::ConversationFull { max });
    }
    let (id, cancel) = session.begin_answer().ok_or(Refusal::Busy)?;
    // Frees the session however this ends: refused below, or the task ending or
    // panicking; it can never stay "busy".
    let end = EndAnswer(Arc::clone(&session), id);
    input.id = id;
    let (sender, receiver) = mpsc::channel::<AnswerEvent>(256);
    let events: Events = match delivery {
        // Fused: read again after its end, it stays ended, as the channel does.
        Delivery::Direct => Box::pin(
            futures_util::stream::unfold(receiver, |mut receiver| async move {
                receiver.recv().await.map(|event| (event, receiver))
            })
            .fuse(),
        ),
        Delivery::Logged { browser } => {
            let live = state
                .log
                .begin(&browser, cancel.clone())
                .await
                .map_err(|_| Refusal::Busy)?;
            let follow = live.follow(0);
            // Kept (and mirrored) as they come; shutdown waits for the record too, so
            // other instances hear the answer ended.
            let recording = state.answers.token();
            let log = Arc::clone(&state.log);
            tokio::spawn(async move {
                let _recording = recording;
                log.record(&browser, live, receiver).await;
            });
            follow
        }
    };
    // Counted as running from now, so a shutdown that comes before the task first runs
    // still waits for it.
    let tracked = state.answers.token();
    let done = tokio::spawn({
        let (state, cancel) = (state.clone(), cancel.clone());
        async move {
            let _tracked = tracked;
            let _end = end;
            run(state, session, input, cancel, sender).await
        }
    });
    Ok(Running {
        events,
        cancel,
        done,
    })
}

struct EndAnswer(Arc<Session>, u64);

impl Drop for EndAnswer {
    fn drop(&mut self) {
        self.0.end_answer(self.1);
    }
}

/// `citations`, `cited_sources` and `cited_claims` of a finished answer: the sources the
/// answer cites, then those only cited's additions cite (`added_by_cited`), each with its
/// best check; and the claims the model left uncited, with the source cited added
/// (`number`) or `null` where none of the sources supports them.
pub fn cited_json(
    exchange: &Exchange,
) -> (Vec<String>, Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let mut citations = Vec::new();
    let mut cited = Vec::new();
    let added = crate::model::added_numbers(&exchange.cited, &exchange.claims);
    let checks = crate::model::all_checks(&exchange.alignments, &exchange.claims);
    for number in exchange.cited.iter().chain(&added) {
        let Some(entry) = exchange.sources.iter().find(|e| e.number == *number) else {
            continue;
        };
        let best = crate::model::best_check(&checks, *number);
        citations.push(entry.url.clone());
        cited.push(serde_json::json!({
            "number": entry.number,
            "title": entry.title,
            "url": entry.url,
            "snippet": entry.snippet,
            "round": entry.round,
            "support": best.map(|a| a.support),
            "passage": best.map(|a| a.passage.clone()),
            "added_by_cited": added.contains(number),
        }));
    }
    let claims = exchange
        .claims
        .iter()
        .map(|claim| {
            serde_json::json!({
                "sentence": claim.text,
                "number": claim.added.as_ref().map(|a| a.number),
                "passage": claim.added.as_ref().map(|a| a.passage.clone()),
            })
        })
        .collect();
    (citations, cited, claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_trimmed_and_bounded() {
        assert_eq!(
            Question::parse("  Tokio?  ", 10).map(Question::into_string),
            Ok("Tokio?".to_string())
        );
        assert_eq!(Question::parse(" \n ", 10), Err(QuestionError::Empty));
        assert_eq!(
            Question::parse("长长长长", 3),
            Err(QuestionError::TooLong { length: 4, max: 3 })
        );
        let t = crate::model::Lang::En.texts();
        assert!(QuestionError::TooLong { length: 4, max: 3 }
            .message(t)
            .contains('3'));
    }
}
