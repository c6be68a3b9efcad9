//! `POST /api/files?name=<file name>` (the body is the file): attaches a file to the
//! browser's conversation, starting one when there is none; `POST /api/files/list`: the
//! conversation's files; `POST /api/files/remove?id=<file id>`: takes one out of the
//! conversation (its answers are kept; the next ones no longer search it). Answers JSON:
//! `{"name","message","files","items"}` (`files`: the names, `items`: `{"id","name"}`
//! each, oldest first), or `{"error"}` with
//! 400 (type, no text, too many), 413 (size), 429 (files added faster than questions may
//! be asked), 507 (the owner's storage quota, which counts files, is full) or 401 (no
//! session when people sign in).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;

use crate::ssr::files::{self, FileError, MAX_FILES};
use crate::ssr::request::{remember, CurrentSession};
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;
use crate::ssr::store::StoredFile;

#[derive(serde::Deserialize)]
pub struct Upload {
    #[serde(default)]
    name: String,
}

fn refused(status: StatusCode, message: String) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// The conversation's files, oldest first: `files` (their names) and `items` (id and
/// name each).
async fn listing(state: &AppState, session: &Session) -> serde_json::Value {
    let files = match session.conversation_id() {
        None => Vec::new(),
        Some(conversation) => match state.store.files(&session.owner(), &conversation).await {
            Ok(files) => files,
            Err(error) => {
                tracing::warn!(%error, "cannot list the conversation's files");
                Vec::new()
            }
        },
    };
    let names: Vec<&str> = files.iter().map(|file| file.name.as_str()).collect();
    let items: Vec<serde_json::Value> = files
        .iter()
        .map(|file| json!({ "id": file.id, "name": file.name }))
        .collect();
    json!({ "files": names, "items": items })
}

pub async fn list(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
) -> Response {
    let listed = match session {
        Some(Extension(CurrentSession(session))) => listing(&state, &session).await,
        None => json!({ "files": [], "items": [] }),
    };
    Json(listed).into_response()
}

#[derive(serde::Deserialize)]
pub struct Removal {
    #[serde(default)]
    id: String,
}

/// Takes a file out of the browser's conversation.
pub async fn remove(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
    headers: axum::http::HeaderMap,
    Query(removal): Query<Removal>,
) -> Response {
    let session = session.map(|Extension(CurrentSession(session))| session);
    let lang = crate::ssr::request::lang_for(session.as_deref(), &headers);
    let t = lang.texts();
    let (Some(session), Some(conversation)) = (
        session.as_ref(),
        session.as_ref().and_then(|s| s.conversation_id()),
    ) else {
        return refused(StatusCode::NOT_FOUND, t.file_not_found.to_string());
    };
    match state
        .store
        .remove_file(&session.owner(), &conversation, &removal.id)
        .await
    {
        Ok(Some(name)) => {
            tracing::info!(session = ?session.id, "file removed");
            let mut listed = listing(&state, session).await;
            listed["name"] = json!(name);
            listed["message"] = json!(t.file_removed.replace("{name}", &name));
            Json(listed).into_response()
        }
        Ok(None) => refused(StatusCode::NOT_FOUND, t.file_not_found.to_string()),
        Err(error) => {
            tracing::error!(%error, "cannot remove a file");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

pub async fn upload(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
    headers: axum::http::HeaderMap,
    Query(upload): Query<Upload>,
    body: Bytes,
) -> Response {
    let session = session.map(|Extension(CurrentSession(session))| session);
    let lang = crate::ssr::request::lang_for(session.as_deref(), &headers);
    let (session, cookie) = match session {
        Some(session) => (session, None),
        None => match crate::ssr::request::mint(&state).await {
            Some((session, cookie)) => (session, Some(cookie)),
            None => return refused(StatusCode::UNAUTHORIZED, lang.texts().sign_in.to_string()),
        },
    };
    let mut response = attach(&state, &session, &upload.name, body, lang).await;
    if let Some(cookie) = cookie {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

async fn attach(
    state: &AppState,
    session: &Arc<Session>,
    raw_name: &str,
    body: Bytes,
    lang: crate::model::Lang,
) -> Response {
    let t = lang.texts();
    let name = files::clean_name(raw_name);
    let max = state.config.capacity.file_bytes;
    if body.len() > max {
        let error = FileError::TooLarge {
            max_mb: max / 1024 / 1024,
        };
        return refused(StatusCode::PAYLOAD_TOO_LARGE, files::message(lang, &error));
    }
    if files::FileKind::of(&name).is_none() {
        return refused(
            StatusCode::BAD_REQUEST,
            files::message(lang, &FileError::Unsupported),
        );
    }
    // Reading a file costs CPU and its passages are kept: uploads have a rate of their own
    // (as many a minute as questions) and the quota, which counts files, must have room.
    let owner = session.owner();
    if let Err(wait) = state
        .shared
        .check_rate(&state.limits.uploads, &owner, &owner)
        .await
    {
        let secs = wait.as_secs().max(1);
        let mut response = refused(
            StatusCode::TOO_MANY_REQUESTS,
            t.asking_too_fast.replace("{secs}", &secs.to_string()),
        );
        if let Ok(value) = secs.to_string().parse() {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    if crate::ssr::request::quota_full(state, &owner).await {
        return refused(StatusCode::INSUFFICIENT_STORAGE, t.quota_full.to_string());
    }
    let size = body.len();
    let extracted = state.extractor.extract(&name, body).await;
    let passages = match extracted {
        Ok(passages) => passages,
        Err(error) => return refused(StatusCode::BAD_REQUEST, files::message(lang, &error)),
    };
    let Ok(passages) = serde_json::to_string(&passages) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    // The browser's conversation, or a new one named after the file.
    let conversation = match session.conversation_id() {
        Some(id) => id,
        None => {
            let id = SessionId::random().to_string();
            let mode = session.settings().mode;
            if let Err(error) = state
                .store
                .create_conversation(&owner, &id, &name, mode)
                .await
            {
                tracing::error!(%error, "cannot start a conversation for a file");
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
            session.start_conversation(session.generation(), id.clone());
            remember(state, session).await;
            id
        }
    };
    let file = StoredFile {
        id: SessionId::random().to_string(),
        name: name.clone(),
        size: i64::try_from(size).unwrap_or(i64::MAX),
        passages,
    };
    match state
        .store
        .add_file(&owner, &conversation, &file, MAX_FILES)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            return refused(
                StatusCode::BAD_REQUEST,
                files::message(lang, &FileError::TooMany { max: MAX_FILES }),
            )
        }
        Err(error) => {
            tracing::error!(%error, "cannot store a file");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    }
    tracing::info!(session = ?session.id, size, "file added");
    let mut listed = listing(state, session).await;
    listed["name"] = json!(name);
    listed["message"] = json!(t.file_added.replace("{name}", &name));
    Json(listed).into_response()
}
