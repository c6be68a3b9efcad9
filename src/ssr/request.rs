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
use crate::ssr::session::Session;
use crate::ssr::state::AppState;

pub const COOKIE_NAME: &str = "cited_session";

/// Request extension carrying the caller's session to pages and server functions.
#[derive(Clone)]
pub struct CurrentSession(pub Arc<Session>);

/// Middleware: finds or creates the session and hands it to the handler. Static files and
/// `/healthz` pass through without one.
pub async fn attach(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.starts_with("/pkg/") || path == "/healthz" || path == "/favicon.ico" {
        return next.run(request).await;
    }
    let now = Instant::now();
    let existing = request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| *name == COOKIE_NAME)
        .find_map(|(_, value)| state.sessions.get(value, now));
    let (session, created) = match existing {
        Some(session) => (session, false),
        None => (state.sessions.create(now), true),
    };
    if created {
        tracing::debug!(session = ?session.id, "new session");
    }
    let id = session.id;
    request.extensions_mut().insert(CurrentSession(session));
    let mut response = next.run(request).await;
    if created {
        let cookie = format!("{COOKIE_NAME}={id}; Path=/; HttpOnly; SameSite=Lax");
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(SET_COOKIE, value);
        }
    }
    response
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

/// The caller's session, for a server function; [`AppError::NoSession`] (401) without one.
pub fn session() -> Result<Arc<Session>, AppError> {
    current().ok_or_else(|| reject(AppError::NoSession))
}

/// The app state, for a server function.
pub fn state() -> Result<AppState, AppError> {
    leptos::prelude::use_context::<AppState>().ok_or_else(|| reject(AppError::Internal))
}
