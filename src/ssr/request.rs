//! The session of an HTTP request: the `attach` middleware finds (or mints) it from the
//! `cited_session` cookie, and pages and server functions read it (and the request's UI
//! language) from the request. The only place that knows about the cookie.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

use crate::error::AppError;
use crate::model::Lang;
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;
use crate::ssr::store::StoredBrowser;

pub const COOKIE_NAME: &str = "cited_session";

/// The nonce of a page's hydration script, minted per request by `web::guard`, which
/// names it in the CSP header.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

/// Request extension carrying the caller's session to pages and server functions.
#[derive(Clone)]
pub struct CurrentSession(pub Arc<Session>);

/// The session id a request's cookie names, if any.
fn cookie_id(request: &Request) -> Option<String> {
    request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_string())
}

/// The session a browser's cookie names: from memory, else restored from the store (after
/// a restart, or once memory dropped it). `None` for an unknown id.
pub async fn find_session(state: &AppState, raw_id: &str) -> Option<Arc<Session>> {
    let now = Instant::now();
    if let Some(session) = state.sessions.get(raw_id, now) {
        return Some(session);
    }
    let id = SessionId::parse(raw_id)?;
    let browser = match state.store.browser(&id.to_string()).await {
        Ok(browser) => browser?,
        Err(error) => {
            // The database is down: keep the browser's own id (a new one would cut it off
            // from everything it stored), with what memory has, which is nothing yet.
            tracing::warn!(%error, "cannot read the browser's state; continuing without it");
            return Some(state.sessions.insert(Session::new(id, now)));
        }
    };
    let session = Session::new(id, now);
    session.update_settings(|settings| *settings = browser.settings);
    if let Some(conversation) = browser.conversation {
        match state
            .store
            .conversation(&id.to_string(), &conversation)
            .await
        {
            Ok(Some(stored)) => {
                session.open_conversation(conversation, stored.exchanges, stored.registry)
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "cannot read the conversation"),
        }
    }
    tracing::debug!(session = ?id, "session restored from the store");
    Some(state.sessions.insert(session))
}

/// Middleware: hands the browser's session (when its cookie names one) to pages and server
/// functions. Nothing is minted here: a session is created only when a browser first asks
/// or changes a setting ([`session_or_mint`]), never for assets, 404s or `/healthz`.
pub async fn attach(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.starts_with("/pkg/") || path == "/healthz" || path == "/favicon.ico" {
        return next.run(request).await;
    }
    if let Some(raw_id) = cookie_id(&request) {
        if let Some(session) = find_session(&state, &raw_id).await {
            request.extensions_mut().insert(CurrentSession(session));
        }
    }
    next.run(request).await
}

/// The UI language of a request: the session's choice, else the browser's Accept-Language.
pub fn lang_for(session: Option<&Session>, headers: &axum::http::HeaderMap) -> Lang {
    if let Some(lang) = session.and_then(|s| s.settings().lang) {
        return lang;
    }
    headers
        .get(axum::http::header::ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .map(Lang::from_accept_language)
        .unwrap_or_default()
}

/// The UI language of the request being handled (page render or server function).
pub fn request_lang() -> Lang {
    let Some(parts) = leptos::prelude::use_context::<axum::http::request::Parts>() else {
        return Lang::default();
    };
    let session = parts
        .extensions
        .get::<CurrentSession>()
        .map(|c| c.0.clone());
    lang_for(session.as_deref(), &parts.headers)
}

/// The CSP nonce of the page being rendered (minted by `web::guard`).
pub fn request_nonce() -> Option<String> {
    let parts = leptos::prelude::use_context::<axum::http::request::Parts>()?;
    parts
        .extensions
        .get::<CspNonce>()
        .map(|nonce| nonce.0.clone())
        .filter(|nonce| !nonce.is_empty())
}

/// The session of the request being handled, inside a page render or a server function.
pub fn current() -> Option<Arc<Session>> {
    let parts = leptos::prelude::use_context::<axum::http::request::Parts>()?;
    parts
        .extensions
        .get::<CurrentSession>()
        .map(|current| current.0.clone())
}

/// Sets the response's status from the error ([`AppError::status`]) and hands it back, for
/// a server function to return.
pub fn reject(error: AppError) -> AppError {
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        let status = axum::http::StatusCode::from_u16(error.status())
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        response.set_status(status);
    }
    error
}

/// The app state, for a server function.
pub fn state() -> Result<AppState, AppError> {
    leptos::prelude::use_context::<AppState>().ok_or_else(|| reject(AppError::Internal))
}

/// The caller's session, minted (and its cookie set) when the browser has none: for server
/// functions that change state (asking, settings).
pub async fn session_or_mint() -> Result<Arc<Session>, AppError> {
    if let Some(session) = current() {
        return Ok(session);
    }
    let state = state()?;
    let session = state.sessions.create(Instant::now());
    let id = session.id.to_string();
    let browser = StoredBrowser {
        settings: session.settings(),
        conversation: None,
    };
    if let Err(error) = state.store.save_browser(&id, &browser).await {
        tracing::warn!(%error, "cannot save the new browser");
    }
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        // A year: the history lives as long as the cookie does.
        let cookie =
            format!("{COOKIE_NAME}={id}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax");
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.append_header(SET_COOKIE, value);
        }
    }
    tracing::debug!(session = ?session.id, "new session");
    Ok(session)
}

/// Saves the session's settings and current conversation for its browser.
pub async fn remember(state: &AppState, session: &Session) {
    let browser = StoredBrowser {
        settings: session.settings(),
        conversation: session.conversation_id(),
    };
    if let Err(error) = state
        .store
        .save_browser(&session.id.to_string(), &browser)
        .await
    {
        tracing::warn!(%error, "cannot save the browser's state");
    }
}
