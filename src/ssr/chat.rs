//! The Chat pipeline (seed 003): search once when the switch is on, number the results per
//! answer (1..n), put them into the prompt, stream the model's answer, and resolve its
//! citations when it is done.
//!
//! It reports progress as [`AnswerEvent`]s on a channel and never fails as a whole: a
//! failed search becomes a notice and an answer without search; a failed model becomes a
//! `Failed` event. It stops when the stop token fires or the receiver goes away (the
//! browser disconnected), and the exchange is saved to the session either way.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::citation::prompt::{chat_block, PromptLang};
use crate::citation::{render, used_numbers, Lookup, Registry};
use crate::model::Lang;
use crate::model::{AnswerEvent, Exchange, Level, Mode, Notice};
use crate::ssr::llm::{budget, AnswerContext, ChatEvent, ChatRequest, Message, ModelKind};
use crate::ssr::prompts::{self, ChatSearch};
use crate::ssr::search::{cached_search, has_han, SearchError, SearchOptions, SearchProvider};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;

pub struct ChatInput {
    pub id: u64,
    pub question: String,
    pub search_enabled: bool,
    /// The UI language, for statuses and notices (the answer follows the question).
    pub lang: Lang,
    pub mode: Mode,
}

/// The search provider of this answer (the session's source choice); a fallback to the
/// knowledge base is announced as a notice.
pub(crate) async fn pick_search(
    state: &AppState,
    session: &Session,
    lang: Lang,
    cancel: &CancellationToken,
    exchange: &mut Exchange,
    events: &mpsc::Sender<AnswerEvent>,
) -> Arc<dyn SearchProvider> {
    // The health check may take a SearXNG timeout; stop must not wait for it.
    let picked = tokio::select! {
        picked = state.pick_search(session.settings().sources, lang) => picked,
        () = halted(cancel, events) => return Arc::clone(&state.search),
    };
    if let Some(notice) = picked.notice {
        tracing::info!("SearXNG is unavailable; searching the knowledge base");
        exchange.notices.push(notice.clone());
        let _ = emit(events, AnswerEvent::Notice { notice }).await;
    }
    picked.provider
}

/// Sends an event; false when nobody listens any more. Never waits past a stop: a full
/// channel (a slow browser) cannot keep a stopped answer alive.
pub(crate) async fn emit(events: &mpsc::Sender<AnswerEvent>, event: AnswerEvent) -> bool {
    tokio::select! {
        sent = events.send(event) => sent.is_ok(),
        () = events.closed() => false,
    }
}

/// Resolves when the answer should stop: the stop button, or the browser went away.
pub(crate) async fn halted(cancel: &CancellationToken, events: &mpsc::Sender<AnswerEvent>) {
    tokio::select! {
        () = cancel.cancelled() => {},
        () = events.closed() => {},
    }
}

/// The conversation so far as model messages: each finished exchange is a user question
/// and the assistant's answer.
pub fn history(conversation: &[Exchange]) -> Vec<Message> {
    conversation
        .iter()
        .filter(|exchange| !exchange.answer.trim().is_empty())
        .flat_map(|exchange| {
            [
                Message::User(exchange.question.clone()),
                Message::assistant(exchange.answer.clone()),
            ]
        })
        .collect()
}

#[tracing::instrument(skip_all, fields(answer = input.id, search = input.search_enabled))]
pub async fn run(
    state: &AppState,
    session: &Session,
    input: ChatInput,
    cancel: CancellationToken,
    events: mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let t = input.lang.texts();
    let generation = session.generation();
    let (mut exchange, mut listening) = begin(state, &input, &events).await;
    let mut registry = Registry::new();
    let mut search = ChatSearch::Off;
    if input.search_enabled && listening {
        listening = emit(
            &events,
            AnswerEvent::Status {
                text: t.searching.to_string(),
            },
        )
        .await;
        let provider =
            pick_search(state, session, input.lang, &cancel, &mut exchange, &events).await;
        let options = SearchOptions::default();
        let searched = tokio::select! {
            searched = cached_search(session, provider.as_ref(), &input.question, &options) => Some(searched.0),
            () = halted(&cancel, &events) => None,
        };
        match searched {
            None => exchange.stopped = true,
            Some(Ok(results)) if !results.sources.is_empty() => {
                registry = Registry::single_round(&input.question, &results.sources);
                exchange.sources = registry.entries().to_vec();
                search = ChatSearch::Results;
                listening = emit(
                    &events,
                    AnswerEvent::Sources {
                        sources: exchange.sources.clone(),
                    },
                )
                .await;
            }
            Some(Ok(_)) => {
                search = ChatSearch::NoResults;
                let notice = Notice {
                    level: Level::Info,
                    text: t.no_results.to_string(),
                };
                exchange.notices.push(notice.clone());
                listening = emit(&events, AnswerEvent::Notice { notice }).await;
            }
            Some(Err(error)) => {
                search = ChatSearch::Failed;
                listening = search_failed(&error, input.lang, &mut exchange, &events).await;
            }
        }
    }
    if !exchange.stopped && listening && !cancel.is_cancelled() {
        listening = answer(
            state,
            session,
            &input,
            &registry,
            search,
            &cancel,
            &events,
            &mut exchange,
        )
        .await;
    }
    if cancel.is_cancelled() || !listening {
        exchange.stopped = true;
    }
    finish(session, generation, exchange, &registry, &events).await
}

/// Starts an exchange: its record and the `Started` event. The flag says whether anyone
/// still listens.
pub(crate) async fn begin(
    state: &AppState,
    input: &ChatInput,
    events: &mpsc::Sender<AnswerEvent>,
) -> (Exchange, bool) {
    let offline = state.llm.kind() == ModelKind::Extractive;
    let exchange = Exchange {
        id: input.id,
        mode: input.mode,
        question: input.question.clone(),
        offline,
        ..Exchange::default()
    };
    let listening = emit(
        events,
        AnswerEvent::Started {
            id: input.id,
            offline,
        },
    )
    .await;
    (exchange, listening)
}

/// Ends an exchange: logs numbers with no source, records what the answer cites, sends
/// `Done` and saves the exchange (unless the session was reset since `generation`).
pub(crate) async fn finish(
    session: &Session,
    generation: u64,
    mut exchange: Exchange,
    sources: &impl Lookup,
    events: &mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let rendered = render(&exchange.answer, sources);
    for problem in &rendered.problems {
        // Seed 002 "引用丢失": the marker stays text; the log says so.
        tracing::warn!(number = problem.number, marker = %problem.marker, "引用丢失: the answer cites a number with no source");
    }
    exchange.cited = used_numbers(&exchange.answer, sources);
    exchange.done = true;
    tracing::info!(chars = exchange.answer.chars().count(), cited = ?exchange.cited, stopped = exchange.stopped, "answer done");
    let _ = emit(
        events,
        AnswerEvent::Done {
            cited: exchange.cited.clone(),
            stopped: exchange.stopped,
        },
    )
    .await;
    session.push_exchange(generation, exchange.clone());
    exchange
}

async fn search_failed(
    error: &SearchError,
    lang: Lang,
    exchange: &mut Exchange,
    events: &mpsc::Sender<AnswerEvent>,
) -> bool {
    let text = error.user_message(lang);
    let notice = Notice {
        level: Level::Warning,
        text: text.clone(),
    };
    exchange.notices.push(notice.clone());
    emit(events, AnswerEvent::Notice { notice }).await
        && emit(events, AnswerEvent::Status { text }).await
}

/// Builds the prompt and streams the model's answer into `exchange`. Returns whether the
/// receiver still listens.
#[allow(
    clippy::too_many_arguments,
    reason = "one call site; the pieces are all distinct"
)]
async fn answer(
    state: &AppState,
    session: &Session,
    input: &ChatInput,
    registry: &Registry,
    search: ChatSearch,
    cancel: &CancellationToken,
    events: &mpsc::Sender<AnswerEvent>,
    exchange: &mut Exchange,
) -> bool {
    let t = input.lang.texts();
    let prompt_lang = if has_han(&input.question) {
        PromptLang::Zh
    } else {
        PromptLang::En
    };
    let system = prompts::chat_system(&input.question, search);
    let sources: Vec<String> = registry
        .entries()
        .iter()
        .map(|entry| chat_block([&**entry], state.config.snippet_chars, prompt_lang))
        .collect();
    let fitted = budget::fit(
        &system,
        &sources,
        &history(&session.conversation()),
        &input.question,
        state.config.llm_context_chars,
    );
    if fitted.dropped_turns + fitted.dropped_sources > 0 || fitted.question_cut {
        tracing::info!(
            dropped_turns = fitted.dropped_turns,
            dropped_sources = fitted.dropped_sources,
            question_cut = fitted.question_cut,
            "context budget applied"
        );
    }
    let request = ChatRequest {
        messages: fitted.messages,
        tools: Vec::new(),
        context: AnswerContext {
            question: input.question.clone(),
            sources: registry.entries().iter().map(Arc::clone).collect(),
        },
    };
    if search != ChatSearch::Failed
        && !emit(
            events,
            AnswerEvent::Status {
                text: t.generating.to_string(),
            },
        )
        .await
    {
        return false;
    }
    stream_answer(
        state,
        request,
        input.lang,
        search != ChatSearch::Failed,
        cancel,
        events,
        exchange,
    )
    .await
}

/// Streams a model answer into `exchange.answer`, token by token, until it ends, fails
/// (a `Failed` event) or is stopped. `clear_status` empties the status line at the first
/// token. Returns whether the receiver still listens.
pub(crate) async fn stream_answer(
    state: &AppState,
    request: ChatRequest,
    lang: Lang,
    clear_status: bool,
    cancel: &CancellationToken,
    events: &mpsc::Sender<AnswerEvent>,
    exchange: &mut Exchange,
) -> bool {
    let started = tokio::select! {
        started = state.llm.stream(request) => started,
        () = halted(cancel, events) => return true,
    };
    let mut stream = match started {
        Ok(stream) => stream,
        Err(error) => {
            tracing::warn!(%error, "model failed");
            return failed(error.user_message(lang), exchange, events).await;
        }
    };
    let mut first_token = true;
    loop {
        let next = tokio::select! {
            biased;
            () = halted(cancel, events) => return true,
            next = stream.next() => next,
        };
        match next {
            None | Some(Ok(ChatEvent::Done { .. })) => return true,
            Some(Ok(ChatEvent::Text(text))) => {
                if first_token && clear_status {
                    first_token = false;
                    if !emit(
                        events,
                        AnswerEvent::Status {
                            text: String::new(),
                        },
                    )
                    .await
                    {
                        return false;
                    }
                }
                exchange.answer.push_str(&text);
                if !emit(events, AnswerEvent::Token { text }).await {
                    return false;
                }
            }
            // Chat offers no tools; a model that calls one anyway is ignored.
            Some(Ok(ChatEvent::ToolCalls(_))) => {}
            Some(Err(error)) => {
                tracing::warn!(%error, "model stream failed");
                return failed(error.user_message(lang), exchange, events).await;
            }
        }
    }
}

pub(crate) async fn failed(
    message: String,
    exchange: &mut Exchange,
    events: &mpsc::Sender<AnswerEvent>,
) -> bool {
    exchange.notices.push(Notice {
        level: Level::Error,
        text: message.clone(),
    });
    emit(events, AnswerEvent::Failed { message }).await
}
