//! The session layer: finds the browser's session from its cookie (or an API key, or a
//! trusted proxy's header) and hands it to pages and server functions; refuses requests
//! without one when people must sign in. What each path needs comes from [`super::routes`].

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::middleware::Next;
use axum::response::Response;

use super::routes::{self, Kind, Route};
use crate::model::Lang;
use crate::ssr::config::Auth;
use crate::ssr::request::{
    cookie_name, find_session, lang_for, save_new, session_cookie, CurrentSession,
};
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;

/// The session id a request's cookie names, if any.
fn cookie_id(request: &Request, cookie: &str) -> Option<String> {
    request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == cookie)
        .map(|(_, value)| value.to_string())
}

/// Middleware: hands the browser's session (when its cookie names one) to pages and server
/// functions. Nothing is minted here for anonymous browsers: a session is created only when
/// a browser first asks or changes a setting ([`session_or_mint`]), never for assets, 404s
/// or `/healthz`.
///
/// When people must sign in (`CITED_AUTH`), only a session bound to a user counts; behind
/// a trusted proxy the user comes from its header, and a session is bound to them here.
/// Without one, a page answers with the sign-in page (303 to `/login`) and anything else
/// with 401.
pub async fn attach(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let route = routes::of(&path);
    if route.sessionless() {
        return next.run(request).await;
    }
    // An API key (`Authorization: Bearer cited_…`) answers for its user, in a session of
    // the request's own; a wrong key is refused, whatever the sign-in.
    if route.kind == Kind::KeyApi {
        if let Some(key) = bearer(&request) {
            let hash = crate::ssr::passwords::api_key_hash(&key);
            match state.store.api_key_user(&hash).await {
                Ok(Some(user)) => {
                    let session =
                        Session::new(SessionId::random(), Instant::now()).with_user(Some(user));
                    request
                        .extensions_mut()
                        .insert(CurrentSession(Arc::new(session)));
                    return next.run(request).await;
                }
                Ok(None) => return api_unauthorized(&path, "The API key is not valid."),
                Err(error) => {
                    tracing::error!(%error, "cannot check the API key");
                    return api_unauthorized(&path, "The API key cannot be checked now.");
                }
            }
        }
    }
    let cookie = cookie_name(&state.config.access);
    let mut session = match cookie_id(&request, cookie) {
        Some(raw_id) => find_session(&state, &raw_id).await,
        None => None,
    };
    let mut minted = None;
    if state.config.access.auth != Auth::Off {
        session = match session {
            Some(session) if session.user.is_some() => still_signed_in(&state, session).await,
            _ => None,
        };
    }
    match &state.config.access.auth {
        Auth::Off | Auth::Accounts => {}
        Auth::Proxy { header, from } => {
            let user = proxy_user(&request, header, from);
            if session.as_ref().and_then(|s| s.user.clone()) != user {
                session = None;
            }
            if let (None, Some(user)) = (&session, user) {
                let new = sign_in(&state, &user).await;
                minted = Some(new.id);
                session = Some(new);
            }
        }
    }
    let signed_in = session.is_some();
    if let Some(session) = &session {
        request
            .extensions_mut()
            .insert(CurrentSession(Arc::clone(session)));
    }
    if state.config.access.auth != Auth::Off && !signed_in && !route.public() {
        return refuse_anonymous(&state, &request, &path, route);
    }
    let changes = request.method() == axum::http::Method::POST && route.changes_browser;
    let mut response = next.run(request).await;
    // A request that may have changed the browser's state: other instances read it again.
    if changes && state.shared.is_shared() {
        let id = session
            .as_ref()
            .map(|session| session.id.to_string())
            .or_else(|| minted_cookie(&response, cookie));
        if let Some(id) = id {
            if let Some(version) = state.shared.browser_changed(&id).await {
                if let Some(session) = state.sessions.get(&id, Instant::now()) {
                    session.made_version(version);
                }
            }
        }
    }
    if let Some(id) = minted {
        if let Some(cookie) = session_cookie(&state, Some(&id.to_string())) {
            response.headers_mut().append(SET_COOKIE, cookie);
        }
    }
    response
}

/// The session id a response's `Set-Cookie` gives the browser (a session minted by the
/// request), if any.
fn minted_cookie(response: &Response, cookie: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == cookie && !value.is_empty())
        .map(|(_, value)| value.to_string())
}

/// The session, if its browser is still signed in as its user.
async fn still_signed_in(state: &AppState, session: Arc<Session>) -> Option<Arc<Session>> {
    if !session.due_for_check(state.config.access.recheck) {
        return Some(session);
    }
    match state.store.browser(&session.id.to_string()).await {
        Ok(Some(browser)) if browser.user == session.user => {
            session.checked();
            Some(session)
        }
        Ok(_) => {
            state.sessions.remove(&session.id);
            None
        }
        Err(error) => {
            // The database is down: what memory knows stands until it is back.
            tracing::warn!(%error, "cannot check the session's sign-in");
            Some(session)
        }
    }
}

/// The key of an `Authorization: Bearer` header.
fn bearer(request: &Request) -> Option<String> {
    let value = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, key) = value.trim().split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") && key.trim().starts_with("cited_"))
        .then(|| key.trim().to_string())
}

/// 401 in the OpenAI API's error shape, or as a JSON-RPC error for MCP (`/mcp`), whose
/// clients show its message; both say a Bearer key is what is wanted.
fn api_unauthorized(path: &str, message: &str) -> Response {
    use axum::response::IntoResponse;
    let body = if path == "/mcp" {
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": -32001, "message": message },
        })
    } else {
        serde_json::json!({"error": {
            "message": message,
            "type": "invalid_request_error",
            "param": null,
            "code": "invalid_api_key",
        }})
    };
    (
        axum::http::StatusCode::UNAUTHORIZED,
        [(
            axum::http::header::WWW_AUTHENTICATE,
            "Bearer realm=\"cited\"",
        )],
        axum::Json(body),
    )
        .into_response()
}

/// The user a trusted proxy names, when the request comes from one.
fn proxy_user(
    request: &Request,
    header: &str,
    from: &[crate::ssr::config::IpNet],
) -> Option<String> {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?
        .0
        .ip();
    if !from.iter().any(|net| net.contains(peer)) {
        return None;
    }
    let name = request.headers().get(header)?.to_str().ok()?.trim();
    crate::ssr::passwords::valid_name(name).then(|| name.to_string())
}

/// A new session bound to `user`, kept in memory and in the store; it starts with the
/// settings of the user's most recently used browser.
pub async fn sign_in(state: &AppState, user: &str) -> Arc<Session> {
    let session =
        Session::new(SessionId::random(), Instant::now()).with_user(Some(user.to_string()));
    match state.store.latest_settings(user).await {
        Ok(Some(settings)) => {
            session.update_settings(|current| *current = settings);
        }
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "cannot read the user's settings"),
    }
    let session = state.sessions.insert(session);
    save_new(state, &session).await;
    tracing::info!(session = ?session.id, "signed in");
    session
}

/// What a request without a signed-in session gets: the sign-in page for a page, 401
/// otherwise (in the API's shape under `/v1/`).
fn refuse_anonymous(state: &AppState, request: &Request, path: &str, route: Route) -> Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let page = request.method() == axum::http::Method::GET && route.kind == Kind::Page;
    if page && matches!(state.config.access.auth, Auth::Accounts) {
        return (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, "/login"),
                (header::CACHE_CONTROL, "no-store"),
            ],
        )
            .into_response();
    }
    let lang = lang_for(None, request.headers());
    if route.kind == Kind::KeyApi {
        return api_unauthorized(
            path,
            "This cited requires an account: send an API key (`cited key add USER`) as `Authorization: Bearer cited_…`.",
        );
    }
    let text = match lang {
        Lang::ZhCn => "需要先登录。",
        Lang::En => "Sign in first.",
    };
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}
