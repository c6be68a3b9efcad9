//! Agent mode (seeds 000, 002, 003): the model decides when to search through the
//! `web_search` tool. Every result is numbered in the session's registry, so numbers run
//! across the whole session; the tool output the model reads carries those numbers.
//!
//! A loop: model → tool calls (run concurrently, registered in call order so numbering is
//! deterministic) → tool results → model → … until it answers without calling a tool. At
//! most `CITED_AGENT_MAX_SEARCHES` searches per answer; past the cap the tool tells the
//! model to answer now. A model that rejects tools gets a notice and Chat's
//! search-then-answer on the same turn.
//!
//! An answer written without any search is marked `unsearched`: the page says so under it
//! and offers "搜索后重答", which asks again with `force_search` (search, then answer).

use crate::citation::prompt::tool_output;
use crate::model::{Level, Source, Status, Step};
use crate::ssr::chat;
use crate::ssr::llm::{budget, AnswerContext, ChatRequest, LlmError, Message, ToolCall};
use crate::ssr::pipeline::search::Searched;
use crate::ssr::pipeline::{CacheUse, Halted, Turn};
use crate::ssr::prompts;
use crate::ssr::search::SearchOptions;

/// Model turns per answer: every allowed search, plus room to answer after the cap.
const EXTRA_TURNS: usize = 3;

#[tracing::instrument(skip_all, fields(answer = turn.input().id))]
pub async fn run(turn: &mut Turn) -> Result<(), Halted> {
    if turn.input().force_search {
        // "搜索后重答": the person asked for this answer to be searched.
        return chat::search_then_answer(turn).await;
    }
    turn.searcher().await?;
    let tool = prompts::web_search_tool();
    let question = turn.input().question.clone();
    let fitted = budget::fit(
        &prompts::agent_system(&question),
        &[],
        &turn.history(),
        &question,
        turn.state().config.llm_context_chars,
    );
    let mut messages = fitted.messages;
    let mut searches = 0usize;
    let cap = turn.state().config.agent_max_searches;
    for _round in 0..cap + EXTRA_TURNS {
        turn.check()?;
        let registry = turn.registry();
        let request = ChatRequest {
            messages: messages.clone(),
            tools: vec![tool.clone()],
            context: AnswerContext {
                question: question.clone(),
                sources: turn
                    .retrieved()
                    .iter()
                    .filter_map(|n| registry.shared(*n).cloned())
                    .collect(),
            },
            ..ChatRequest::default()
        };
        let before = turn.answer().len();
        // The status line says the model is at work (with its seconds) until it writes.
        turn.status(Some(Status::Generating)).await?;
        let reply = turn.stream_model(request, true).await?;
        match reply.error {
            Some(error) if rejects_tools(&error) && reply.text.is_empty() => {
                tracing::warn!(%error, "the model cannot call tools; falling back to search then answer");
                let text = turn.texts().no_tools;
                turn.notice(Level::Warning, text).await?;
                return chat::search_then_answer(turn).await;
            }
            Some(error) => return turn.model_failed(&error).await,
            None => {}
        }
        if reply.tool_calls.is_empty() {
            break;
        }
        // The text of a round that ends in tool calls was thinking, not the answer.
        if !reply.text.is_empty() {
            turn.retract_text_since(before).await?;
            turn.step(Step::Thought {
                text: reply.text.clone(),
            })
            .await?;
        }
        messages.push(Message::Assistant {
            content: reply.text,
            tool_calls: reply.tool_calls.clone(),
        });
        let outputs = run_tools(turn, &reply.tool_calls, &mut searches, cap).await?;
        for (call, output) in reply.tool_calls.iter().zip(outputs) {
            messages.push(Message::Tool {
                call_id: call.id.clone(),
                content: output,
            });
        }
        let sources = turn.answer_sources();
        turn.sources(sources).await?;
    }
    tracing::info!(searches, "agent searches done");
    // (Citing what earlier answers found counts as searched.)
    if searches == 0 && !turn.answer().trim().is_empty() && turn.answer_sources().is_empty() {
        // Answered from memory: said under the answer, with a button to search.
        turn.mark_unsearched();
    }
    Ok(())
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

/// What one tool call asks for.
enum Call {
    Search(String),
    Capped(String),
    Invalid(String),
}

/// The query of a `web_search` call, if its arguments hold one.
fn query_of(call: &ToolCall) -> Option<String> {
    let args = call.parsed_arguments().ok()?;
    let query = args.get("query")?.as_str()?.trim();
    (!query.is_empty()).then(|| query.to_string())
}

/// Runs one round's tool calls: searches concurrently, registered in call order. Each call
/// leaves a trace step; returns, per call, the tool output the model reads.
async fn run_tools(
    turn: &mut Turn,
    calls: &[ToolCall],
    searches: &mut usize,
    cap: usize,
) -> Result<Vec<String>, Halted> {
    let plans: Vec<Call> = calls
        .iter()
        .map(|call| match query_of(call) {
            None => Call::Invalid(call.arguments.clone()),
            Some(query) if *searches >= cap => Call::Capped(query),
            Some(query) => {
                *searches += 1;
                Call::Search(query)
            }
        })
        .collect();
    let searcher = turn.searcher().await?;
    for plan in &plans {
        if let Call::Search(query) = plan {
            let query = Some(query.clone());
            turn.status(Some(Status::Searching { query })).await?;
        }
    }
    let options = SearchOptions::default();
    // The first search of the answer also looks for the image strip's pictures.
    let pictures_for = plans
        .iter()
        .find_map(|plan| match plan {
            Call::Search(query) => Some(query.clone()),
            _ => None,
        })
        .filter(|_| turn.first_pictures());
    let (searched, images): (Vec<Option<Result<Searched, Halted>>>, _) = {
        let turn = &*turn;
        let searches = plans.iter().map(|plan| {
            let searcher = &searcher;
            let options = &options;
            async move {
                match plan {
                    Call::Search(query) => Some(turn.search(searcher, query, options).await),
                    Call::Capped(_) | Call::Invalid(_) => None,
                }
            }
        });
        let pictures = async {
            match &pictures_for {
                Some(query) => turn.find_images(&searcher, query).await,
                None => Vec::new(),
            }
        };
        tokio::join!(futures_util::future::join_all(searches), pictures)
    };
    if !images.is_empty() {
        turn.images(images).await?;
    }
    // A stop during the searches keeps the ones that finished (numbered, in the trace).
    let mut halted = turn.status(None).await.is_err();
    let mut outputs = Vec::with_capacity(plans.len());
    // A failed search is told under the answer too, as in Chat (seed 003), not only in the
    // folded steps.
    let mut failures = Vec::new();
    for (plan, searched) in plans.into_iter().zip(searched) {
        let (output, step) = match (plan, searched) {
            (Call::Search(query), Some(Ok((Ok(results), cache)))) => {
                registered(turn, query, &results.sources, cache).await?
            }
            (Call::Search(query), Some(Err(Halted))) => {
                halted = true;
                let output = "The search was stopped.".to_string();
                (output, search_step(query, &[], false, None))
            }
            (Call::Search(query), Some(Ok((Err(error), _)))) => {
                let message =
                    turn.for_readers(&crate::ssr::messages::search_error(turn.lang(), &error));
                let output = format!("The search failed: {message}");
                failures.push(message.clone());
                (output, search_step(query, &[], false, Some(message)))
            }
            (Call::Capped(query), _) => {
                tracing::debug!(query, cap, "search cap reached");
                let output = prompts::search_cap_reached(&turn.input().question, cap);
                (output, Step::Capped { query })
            }
            (Call::Invalid(arguments), _) | (Call::Search(arguments), None) => {
                // (A search call always has a search result; `None` cannot happen.)
                let output =
                    "Invalid arguments: call web_search with {\"query\": \"...\"}.".to_string();
                let error = Some("invalid arguments".to_string());
                (output, search_step(arguments, &[], false, error))
            }
        };
        halted |= turn.step(step).await.is_err();
        outputs.push(output);
    }
    for message in failures {
        halted |= turn.notice_once(Level::Warning, message).await.is_err();
    }
    if halted {
        return Err(Halted);
    }
    Ok(outputs)
}

/// Registers one search's results in the session registry; returns the tool output with
/// their global numbers, and the trace step.
async fn registered(
    turn: &mut Turn,
    query: String,
    sources: &[Source],
    cache: CacheUse,
) -> Result<(String, Step), Halted> {
    let numbers: Vec<u32> = turn
        .register_rounds(&[(query.as_str(), sources)])
        .await?
        .into_iter()
        .flat_map(|allocation| allocation.numbers)
        .collect();
    let registry = turn.registry();
    let output = tool_output(&registry, &numbers, turn.state().config.snippet_chars);
    let output = if output.is_empty() {
        format!("No results for \"{query}\".")
    } else {
        output
    };
    let step = search_step(query, &numbers, cache == CacheUse::Hit, None);
    Ok((output, step))
}

fn search_step(query: String, numbers: &[u32], cached: bool, error: Option<String>) -> Step {
    Step::Search {
        query,
        results: numbers.len(),
        first: numbers.iter().min().copied(),
        last: numbers.iter().max().copied(),
        cached,
        error,
    }
}
