//! The plain-HTTP parts of the history, so they work without JavaScript: `POST /new`
//! (a new conversation, then back to `/`), `GET /c/<id>/export.md` (a conversation as
//! Markdown with its reference lists, as a download) and `GET /c/<id>/citations.{bib,ris,json}`
//! (the sources it cites for a reference manager: BibTeX, RIS, CSL-JSON).

use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Extension;

use crate::components::conversation::conversation_markdown;
use crate::ssr::request::{remember, CurrentSession};
use crate::ssr::state::AppState;
use crate::ssr::store::StoredConversation;

/// "新对话": the browser's next question starts a new conversation; the old one stays in
/// the history.
pub async fn new_chat(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
) -> Redirect {
    if let Some(Extension(CurrentSession(session))) = session {
        crate::ssr::request::stop_answer(&state, &session).await;
        session.reset();
        remember(&state, &session).await;
        tracing::info!(session = ?session.id, "new conversation");
    }
    Redirect::to("/")
}

/// The conversation as one Markdown document: its title, then each question, answer and
/// reference list.
pub fn markdown(conversation: &StoredConversation) -> String {
    conversation_markdown(&conversation.summary.title, &conversation.exchanges)
}

/// "导出": one of the browser's conversations as a Markdown download.
pub async fn export(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
    Path(id): Path<String>,
) -> Response {
    let Some(Extension(CurrentSession(session))) = session else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match state.store.conversation(&session.owner(), &id).await {
        Ok(Some(conversation)) => {
            // The id is 32 hex digits, so the file name needs no escaping.
            let disposition = format!(
                "attachment; filename=\"cited-{}.md\"",
                conversation.summary.id
            );
            (
                [
                    (CONTENT_TYPE, "text/markdown; charset=utf-8".to_string()),
                    (CONTENT_DISPOSITION, disposition),
                    (CACHE_CONTROL, "no-store".to_string()),
                ],
                markdown(&conversation),
            )
                .into_response()
        }
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot export a conversation");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// `?answer=<n>`: only that answer's sources.
#[derive(serde::Deserialize)]
pub struct OneAnswer {
    answer: Option<u64>,
}

/// The sources a conversation cites (or one of its answers, by id), as `format`
/// (`citation::export`), as a download.
async fn citations(
    state: &AppState,
    session: Option<Extension<CurrentSession>>,
    id: &str,
    answer: Option<u64>,
    format: crate::citation::export::Format,
) -> Response {
    let Some(Extension(CurrentSession(session))) = session else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match state.store.conversation(&session.owner(), id).await {
        Ok(Some(conversation)) => {
            let accessed = crate::citation::export::utc(conversation.summary.updated_at);
            let (exchanges, name) = match answer {
                None => (
                    conversation.exchanges.as_slice(),
                    conversation.summary.id.clone(),
                ),
                Some(n) => match conversation.exchanges.iter().position(|e| e.id == n) {
                    Some(at) => (
                        &conversation.exchanges[at..=at],
                        format!("{}-{n}", conversation.summary.id),
                    ),
                    None => return StatusCode::NOT_FOUND.into_response(),
                },
            };
            let references = crate::citation::export::references(
                exchanges,
                accessed.get(..10).unwrap_or_default(),
            );
            let disposition = format!(
                "attachment; filename=\"cited-{name}.{}\"",
                format.extension()
            );
            (
                [
                    (CONTENT_TYPE, format.content_type().to_string()),
                    (CONTENT_DISPOSITION, disposition),
                    (CACHE_CONTROL, "no-store".to_string()),
                ],
                format.write(&references),
            )
                .into_response()
        }
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot export a conversation's citations");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// `GET /c/<id>/citations.{bib,ris,json}[?answer=<n>]`: the conversation's (or one
/// answer's) cited sources in the format the extension names; any other extension is not
/// here.
pub async fn citations_file(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
    Path((id, ext)): Path<(String, String)>,
    axum::extract::Query(one): axum::extract::Query<OneAnswer>,
) -> Response {
    match crate::citation::export::Format::parse(&ext) {
        Some(format) if ext == format.extension() => {
            citations(&state, session, &id, one.answer, format).await
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
