//! The Agent pipeline (seeds 000, 002, 003): the model decides when to search through the
//! `web_search` tool. Every result is numbered in the session's registry, so numbers run
//! across the whole session; the tool output the model reads carries those numbers.
//!
//! A loop: model → tool calls (run concurrently, registered in call order so numbering is
//! deterministic) → tool results → model → … until it answers without calling a tool. At
//! most `CITED_AGENT_MAX_SEARCHES` searches per answer; past the cap the tool tells the
//! model to answer now. A model that rejects tools gets a notice and search-then-answer.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::citation::prompt::tool_output;
use crate::citation::{used_numbers, CitationEntry, Registry, SourceMap};
use crate::model::{AnswerEvent, Exchange, Level, Notice, Step};
use crate::ssr::chat::{begin, emit, failed, finish, halted, history, pick_search, ChatInput};
use crate::ssr::llm::{budget, AnswerContext, ChatEvent, ChatRequest, LlmError, Message, ToolCall};
use crate::ssr::prompts;
use crate::ssr::search::{cached_search, CacheUse, SearchOptions, SearchProvider};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;

/// Model turns per answer: every allowed search, plus room to answer after the cap.
const EXTRA_TURNS: usize = 3;

/// The numbers this answer retrieved, plus older ones it cites, as entries.
pub(crate) fn answer_sources(
    registry: &Registry,
    retrieved: &[u32],
    answer: &str,
) -> Vec<Arc<CitationEntry>> {
    let mut numbers: Vec<u32> = retrieved.to_vec();
    numbers.extend(used_numbers(answer, registry));
    numbers.sort_unstable();
    numbers.dedup();
    numbers
        .into_iter()
        .filter_map(|n| registry.shared(n).cloned())
        .collect()
}

#[tracing::instrument(skip_all, fields(answer = input.id))]
pub async fn run(
    state: &AppState,
    session: &Session,
    input: ChatInput,
    cancel: CancellationToken,
    events: mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let generation = session.generation();
    let (mut exchange, mut listening) = begin(state, &input, &events).await;
    let provider = pick_search(state, session, input.lang, &cancel, &mut exchange, &events).await;
    let tool = prompts::web_search_tool();
    let fitted = budget::fit(
        &prompts::agent_system(&input.question),
        &[],
        &history(&session.conversation()),
        &input.question,
        state.config.llm_context_chars,
    );
    let mut messages = fitted.messages;
    let mut retrieved: Vec<u32> = Vec::new();
    let mut searches = 0usize;
    let cap = state.config.agent_max_searches;
    for _turn in 0..cap + EXTRA_TURNS {
        if !listening || cancel.is_cancelled() {
            break;
        }
        let registry = session.with_registry(|registry| registry.clone());
        let request = ChatRequest {
            messages: messages.clone(),
            tools: vec![tool.clone()],
            context: AnswerContext {
                question: input.question.clone(),
                sources: retrieved
                    .iter()
                    .filter_map(|n| registry.shared(*n).cloned())
                    .collect(),
            },
        };
        let started = tokio::select! {
            started = state.llm.stream(request) => started,
            () = halted(&cancel, &events) => break,
        };
        let mut stream = match started {
            Ok(stream) => stream,
            Err(error) => {
                if rejects_tools(&error) {
                    let notice = Notice {
                        level: Level::Warning,
                        text: input.lang.texts().no_tools.to_string(),
                    };
                    exchange.notices.push(notice.clone());
                    let _ = emit(&events, AnswerEvent::Notice { notice }).await;
                    tracing::warn!(%error, "the model cannot call tools; falling back to search then answer");
                    let fallback = crate::ssr::chat::ChatInput {
                        search_enabled: true,
                        ..input
                    };
                    let mut fallback_exchange =
                        crate::ssr::chat::run(state, session, fallback, cancel, events).await;
                    fallback_exchange
                        .notices
                        .insert(0, exchange.notices.remove(0));
                    return fallback_exchange;
                }
                tracing::warn!(%error, "model failed");
                listening = failed(error.user_message(input.lang), &mut exchange, &events).await;
                break;
            }
        };
        let mut turn_text = String::new();
        let mut calls: Vec<ToolCall> = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                () = halted(&cancel, &events) => break,
                next = stream.next() => next,
            };
            match next {
                None | Some(Ok(ChatEvent::Done { .. })) => break,
                Some(Ok(ChatEvent::Text(text))) => {
                    turn_text.push_str(&text);
                    exchange.answer.push_str(&text);
                    if !emit(&events, AnswerEvent::Token { text }).await {
                        listening = false;
                        break;
                    }
                }
                Some(Ok(ChatEvent::ToolCalls(mut new_calls))) => calls.append(&mut new_calls),
                Some(Err(error)) => {
                    tracing::warn!(%error, "model stream failed");
                    listening =
                        failed(error.user_message(input.lang), &mut exchange, &events).await;
                    calls.clear();
                    break;
                }
            }
        }
        drop(stream);
        if calls.is_empty() || !listening || cancel.is_cancelled() {
            break;
        }
        // The text of a turn that ends in tool calls was thinking, not the answer.
        if !turn_text.is_empty() {
            let keep = exchange.answer.len().saturating_sub(turn_text.len());
            exchange.answer.truncate(keep);
            let step = Step::Thought {
                text: turn_text.clone(),
            };
            exchange.steps.push(step.clone());
            listening = emit(&events, AnswerEvent::Step { step }).await;
        }
        messages.push(Message::Assistant {
            content: turn_text,
            tool_calls: calls.clone(),
        });
        let mut conflicted = false;
        let results = run_tools(
            state,
            provider.as_ref(),
            session,
            &input,
            &calls,
            &mut searches,
            cap,
            &cancel,
            &events,
            &mut conflicted,
        )
        .await;
        if conflicted {
            // Seed 002: should never happen; detected, repaired, and the user is told.
            let notice = Notice {
                level: Level::Warning,
                text: input.lang.texts().registry_conflict.to_string(),
            };
            exchange.notices.push(notice.clone());
            listening = emit(&events, AnswerEvent::Notice { notice }).await;
        }
        for (call, (output, step, numbers)) in calls.iter().zip(results) {
            retrieved.extend(numbers);
            exchange.steps.push(step.clone());
            if listening {
                listening = emit(&events, AnswerEvent::Step { step }).await;
            }
            messages.push(Message::Tool {
                call_id: call.id.clone(),
                content: output,
            });
        }
        let registry = session.with_registry(|registry| registry.clone());
        exchange.sources = answer_sources(&registry, &retrieved, "");
        if listening {
            listening = emit(
                &events,
                AnswerEvent::Sources {
                    sources: exchange.sources.clone(),
                },
            )
            .await;
        }
    }
    if cancel.is_cancelled() || !listening {
        exchange.stopped = true;
    }
    let registry = session.with_registry(|registry| registry.clone());
    exchange.sources = answer_sources(&registry, &retrieved, &exchange.answer);
    tracing::info!(searches, "agent searches done");
    let _ = emit(
        &events,
        AnswerEvent::Sources {
            sources: exchange.sources.clone(),
        },
    )
    .await;
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    finish(session, generation, exchange, &sources, &events).await
}

/// True when the server refused the request because of the `tools` field.
fn rejects_tools(error: &LlmError) -> bool {
    match error {
        LlmError::BadRequest { message, .. } => {
            let message = message.to_lowercase();
            message.contains("tool") || message.contains("function")
        }
        _ => false,
    }
}

/// Runs one turn's tool calls: searches concurrently, registers results in call order.
/// Returns, per call, the tool output, its trace step and the numbers it allocated.
#[allow(
    clippy::too_many_arguments,
    reason = "one call site; the pieces are all distinct"
)]
async fn run_tools(
    state: &AppState,
    provider: &dyn SearchProvider,
    session: &Session,
    input: &ChatInput,
    calls: &[ToolCall],
    searches: &mut usize,
    cap: usize,
    cancel: &CancellationToken,
    events: &mpsc::Sender<AnswerEvent>,
    conflicted: &mut bool,
) -> Vec<(String, Step, Vec<u32>)> {
    enum Plan {
        Search(String),
        Capped(String),
        Invalid(String),
    }
    let plans: Vec<Plan> = calls
        .iter()
        .map(|call| {
            let query = call
                .parsed_arguments()
                .ok()
                .and_then(|args| {
                    args.get("query")
                        .and_then(|q| q.as_str())
                        .map(|q| q.trim().to_string())
                })
                .filter(|q| !q.is_empty());
            match query {
                None => Plan::Invalid(call.arguments.clone()),
                Some(query) if *searches >= cap => Plan::Capped(query),
                Some(query) => {
                    *searches += 1;
                    Plan::Search(query)
                }
            }
        })
        .collect();
    let options = SearchOptions::default();
    let searched = futures_util::future::join_all(plans.iter().map(|plan| {
        let options = &options;
        async move {
            match plan {
                Plan::Search(query) => {
                    let _ = emit(events, AnswerEvent::Status { text: format!("{} {query}", input.lang.texts().searching) }).await;
                    tokio::select! {
                        searched = cached_search(session, provider, query, options) => Some(searched),
                        () = halted(cancel, events) => None,
                    }
                }
                _ => None,
            }
        }
    }))
    .await;
    let _ = emit(
        events,
        AnswerEvent::Status {
            text: String::new(),
        },
    )
    .await;
    plans
        .into_iter()
        .zip(searched)
        .map(|(plan, searched)| match (plan, searched) {
            (Plan::Search(query), Some((Ok(results), cache))) => {
                let (numbers, output) = session.with_registry(|registry| {
                    let allocation = registry.add_round(&query, &results.sources);
                    if !allocation.conflicts.is_empty() {
                        *conflicted = true;
                        tracing::error!(conflicts = ?allocation.conflicts, "citation numbers conflicted; repaired");
                    }
                    tracing::info!(query, n_results = results.sources.len(), range = ?allocation.new_range, round = allocation.round, "citation numbers allocated");
                    let output = tool_output(registry, &allocation.numbers, state.config.snippet_chars);
                    (allocation.numbers, output)
                });
                let output = if output.is_empty() { format!("No results for \"{query}\".") } else { output };
                let step = Step::Search {
                    query,
                    results: numbers.len(),
                    first: numbers.iter().min().copied(),
                    last: numbers.iter().max().copied(),
                    cached: cache == CacheUse::Hit,
                    error: None,
                };
                (output, step, numbers)
            }
            (Plan::Search(query), Some((Err(error), _))) => {
                let message = error.user_message(input.lang);
                let step = Step::Search { query, results: 0, first: None, last: None, cached: false, error: Some(message.clone()) };
                (format!("The search failed: {message}"), step, Vec::new())
            }
            (Plan::Search(query), None) => {
                let step = Step::Search { query, results: 0, first: None, last: None, cached: false, error: None };
                ("The search was stopped.".to_string(), step, Vec::new())
            }
            (Plan::Capped(query), _) => {
                tracing::info!(query, cap, "search cap reached");
                (prompts::search_cap_reached(&input.question, cap), Step::Capped { query }, Vec::new())
            }
            (Plan::Invalid(arguments), _) => {
                let step = Step::Search { query: arguments, results: 0, first: None, last: None, cached: false, error: Some("invalid arguments".into()) };
                ("Invalid arguments: call web_search with {\"query\": \"...\"}.".to_string(), step, Vec::new())
            }
        })
        .collect()
}
