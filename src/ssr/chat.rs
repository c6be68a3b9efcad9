//! Chat mode (seed 003): search once when the switch is on, number the results per answer
//! (1..n), put them into the prompt, and stream the model's answer.
//!
//! It never fails as a whole: a failed search becomes a notice and an answer without
//! search; a failed model becomes a `Failed` event.

use std::sync::Arc;

use crate::citation::prompt::{chat_block, PromptLang};
use crate::citation::Registry;
use crate::model::{CitationEntry, Level, Status};
use crate::ssr::llm::{budget, AnswerContext, ChatRequest};
use crate::ssr::pipeline::{Halted, Numbering, Turn};
use crate::ssr::prompts::{self, ChatSearch};
use crate::ssr::search::SearchOptions;
use crate::text::has_han;

#[tracing::instrument(skip_all, fields(answer = turn.input().id, search = turn.input().search_enabled))]
pub async fn run(turn: &mut Turn) -> Result<(), Halted> {
    if turn.input().search_enabled {
        search_then_answer(turn).await
    } else {
        answer(turn, &[], ChatSearch::Off).await
    }
}

/// Searches the question, numbers the results (1..n, or in the session registry when the
/// turn numbers by session), and answers from them. Agent mode falls back to this when its
/// model cannot call tools.
pub async fn search_then_answer(turn: &mut Turn) -> Result<(), Halted> {
    turn.status(Some(Status::Searching { query: None })).await?;
    let searcher = turn.searcher().await?;
    let question = turn.input().question.clone();
    let options = SearchOptions::default();
    let (searched, images) = tokio::join!(
        turn.search(&searcher, &question, &options),
        turn.find_images(&searcher, &question),
    );
    let (searched, _) = searched?;
    turn.images(images).await?;
    match searched {
        Ok(results) if !results.sources.is_empty() => {
            let entries = match turn.numbering() {
                Numbering::PerAnswer => Registry::single_round(&question, &results.sources)
                    .entries()
                    .to_vec(),
                Numbering::Session => {
                    turn.register_rounds(&[(question.as_str(), &results.sources)])
                        .await?;
                    turn.answer_sources()
                }
            };
            turn.sources(entries.clone()).await?;
            answer(turn, &entries, ChatSearch::Results).await
        }
        Ok(_) => {
            let text = turn.texts().no_results;
            turn.notice(Level::Info, text).await?;
            answer(turn, &[], ChatSearch::NoResults).await
        }
        Err(error) => {
            turn.search_failed(&error).await?;
            answer(turn, &[], ChatSearch::Failed).await
        }
    }
}

/// Builds the prompt within the context budget and streams the model's answer.
async fn answer(
    turn: &mut Turn,
    entries: &[Arc<CitationEntry>],
    search: ChatSearch,
) -> Result<(), Halted> {
    let question = turn.input().question.clone();
    let prompt_lang = if has_han(&question) {
        PromptLang::Zh
    } else {
        PromptLang::En
    };
    let system = prompts::chat_system(&question, search);
    let snippet_chars = turn.state().config.snippet_chars;
    let sources: Vec<String> = entries
        .iter()
        .map(|entry| chat_block([&**entry], snippet_chars, prompt_lang))
        .collect();
    let fitted = budget::fit(
        &system,
        &sources,
        &turn.history(),
        &question,
        turn.state().config.llm_context_chars,
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
        context: AnswerContext {
            question,
            sources: entries.to_vec(),
        },
        ..ChatRequest::default()
    };
    // A failed search keeps its message on the status line.
    let progress = search != ChatSearch::Failed;
    if progress {
        turn.status(Some(Status::Generating)).await?;
    }
    let reply = turn.stream_model(request, progress).await?;
    // Chat offers no tools; a model that calls one anyway is ignored.
    match reply.error {
        Some(error) => turn.model_failed(&error).await,
        None => Ok(()),
    }
}
