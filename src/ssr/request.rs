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
use crate::ssr::config::Auth;
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;
use crate::ssr::store::StoredBrowser;

/// Exchanges of a conversation a session reads from the store: its in-memory window.
pub const SESSION_EXCHANGES: u32 = crate::ssr::session::MAX_EXCHANGES as u32;

/// Exchanges a conversation's page shows at first and adds each time more are asked for.
pub const VIEW_EXCHANGES: u32 = 50;

pub const COOKIE_NAME: &str = "cited_session";

/// The cookie's name behind https: a browser takes a `__Host-` cookie only from this host,
/// Secure, for `/`, with no `Domain`, so a sibling site or port cannot plant one.
pub const SECURE_COOKIE_NAME: &str = "__Host-cited_session";

/// The session cookie's name for this configuration (only that name is read).
pub fn cookie_name(access: &crate::ssr::config::AccessConfig) -> &'static str {
    if access.secure_cookies() {
        SECURE_COOKIE_NAME
    } else {
        COOKIE_NAME
    }
}

/// The nonce of a page's hydration script, minted per request by `web::guard`, which
/// names it in the CSP header.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

/// Request extension carrying the caller's session to pages and server functions.
#[derive(Clone)]
pub struct CurrentSession(pub Arc<Session>);

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

/// The session a browser's cookie names: from memory, else restored from the store (after
/// a restart, once memory dropped it, or when another instance changed it since). `None`
/// for an unknown id.
pub async fn find_session(state: &AppState, raw_id: &str) -> Option<Arc<Session>> {
    let now = Instant::now();
    let id = SessionId::parse(raw_id)?;
    let cached = state.sessions.get(&id.to_string(), now);
    let version = if state.shared.is_shared() {
        state.shared.browser_version(&id.to_string()).await
    } else {
        None
    };
    if let Some(session) = &cached {
        // With other instances, a copy that holds an answer still being written elsewhere
        // is read again until it ends (or their reaper marks it interrupted).
        let elsewhere = version.is_some()
            && session
                .conversation()
                .iter()
                .any(|exchange| exchange.state == crate::model::ExchangeState::Answering);
        if !elsewhere && version.is_none_or(|version| version <= session.version()) {
            return cached;
        }
    }
    let browser = match state.store.browser(&id.to_string()).await {
        Ok(browser) => browser?,
        Err(error) => {
            // The database is down: keep the browser's own id (a new one would cut it off
            // from everything it stored), with what memory has, which is nothing yet.
            tracing::warn!(%error, "cannot read the browser's state; continuing without it");
            let session = Session::new(id, now);
            if let Some(older) = &cached {
                session.adopt_answer(older);
            }
            return Some(state.sessions.insert(session));
        }
    };
    let session = Session::new(id, now).with_user(browser.user);
    session.seen_version(version.unwrap_or(0));
    if let Some(older) = &cached {
        session.adopt_answer(older);
    }
    session.update_settings(|settings| *settings = browser.settings);
    if let Some(conversation) = browser.conversation {
        match state
            .store
            .conversation_latest(&session.owner(), &conversation, SESSION_EXCHANGES)
            .await
        {
            Ok(Some(stored)) => session.open_conversation(
                conversation,
                stored.exchanges,
                stored.earlier,
                stored.registry,
            ),
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "cannot read the conversation"),
        }
    }
    tracing::debug!(session = ?id, "session restored from the store");
    Some(state.sessions.insert(session))
}

/// Paths anyone may reach when people must sign in: the sign-in page, assets, the health
/// check, shared conversations (a share link is for people without an account) and the
/// API's description.
fn public_path(path: &str) -> bool {
    path == "/login"
        || path == "/logout"
        || path == "/healthz"
        || path == "/readyz"
        || path == "/metrics"
        || path == "/openapi.json"
        || path.starts_with("/pkg/")
        || path.starts_with("/s/")
        || path == "/api/shared"
        || path == "/api/earlier"
        || path.starts_with("/favicon")
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
    if path.starts_with("/pkg/")
        || matches!(
            path.as_str(),
            "/healthz" | "/readyz" | "/metrics" | "/favicon.ico"
        )
    {
        return next.run(request).await;
    }
    // An API key (`Authorization: Bearer cited_…`) answers for its user, in a session of
    // the request's own; a wrong key is refused, whatever the sign-in.
    if path.starts_with("/v1/") || path == "/mcp" {
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
    if state.config.access.auth != Auth::Off && !signed_in && !public_path(&path) {
        return refuse_anonymous(&state, &request, &path);
    }
    let changes = request.method() == axum::http::Method::POST && changes_browser(&path);
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

/// The requests that may change what is stored of a browser (its settings, its current
/// conversation, its sign-in); an answer says so itself when it stores its exchange.
fn changes_browser(path: &str) -> bool {
    matches!(
        path,
        "/api/update_settings"
            | "/api/open_conversation"
            | "/api/delete_conversation"
            | "/api/rename_conversation"
            | "/api/share_conversation"
            | "/api/ask"
            | "/api/files"
            | "/api/files/remove"
            | "/new"
            | "/login"
            | "/logout"
    )
}

/// Stops the browser's running answer, in this instance or the one writing it; whether
/// there was one.
pub async fn stop_answer(state: &AppState, session: &Session) -> bool {
    session.stop_answer() || state.shared.stop(&session.id.to_string()).await
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

/// What the store keeps of a session's browser.
fn stored_browser(session: &Session) -> StoredBrowser {
    StoredBrowser {
        settings: session.settings(),
        conversation: session.conversation_id(),
        user: session.user.clone(),
    }
}

/// Writes a newly minted session's browser (the one place a browser row is created).
async fn save_new(state: &AppState, session: &Session) {
    let id = session.id.to_string();
    if let Err(error) = state
        .store
        .save_browser(&id, &stored_browser(session))
        .await
    {
        tracing::warn!(%error, "cannot save the new browser");
    }
}

/// The session cookie for `id` (`None`: one that clears it). HttpOnly, SameSite=Lax, and
/// behind https (`CITED_PUBLIC_URL`) Secure and named `__Host-cited_session`.
pub fn session_cookie(state: &AppState, id: Option<&str>) -> Option<HeaderValue> {
    let secure = if state.config.access.secure_cookies() {
        "; Secure"
    } else {
        ""
    };
    let name = cookie_name(&state.config.access);
    // A year: the history lives as long as the cookie does.
    let cookie = match id {
        Some(id) => {
            format!("{name}={id}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax{secure}")
        }
        None => format!("{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax{secure}"),
    };
    HeaderValue::from_str(&cookie).ok()
}

/// What a request without a signed-in session gets: the sign-in page for a page, 401
/// otherwise (in the API's shape under `/v1/`).
fn refuse_anonymous(state: &AppState, request: &Request, path: &str) -> Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let page = request.method() == axum::http::Method::GET
        && (path == "/" || path.starts_with("/c/") || path == "/new");
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
    if path.starts_with("/v1/") || path == "/mcp" {
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

/// Why a question is not taken now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Over the per-user or per-address rate; try again after this long.
    TooFast(std::time::Duration),
    /// The owner's stored conversations reached `CITED_USER_QUOTA_MB`.
    QuotaFull,
}

/// Whether `owner` (a user, or an anonymous browser) may ask now: the rate per owner
/// (`CITED_RATE_ASKS_PER_MIN`), per address (ten times that: one address may be many
/// people behind a NAT), and the storage quota. A database that cannot answer does not
/// block asking.
pub async fn may_ask(
    state: &AppState,
    owner: &str,
    address: Option<std::net::IpAddr>,
) -> Result<(), Refused> {
    let owner_key = owner.to_string();
    state
        .shared
        .check_rate(&state.limits.asks, &owner_key, owner)
        .await
        .map_err(Refused::TooFast)?;
    if let Some(address) = address {
        let key = crate::ssr::limits::address_key(address);
        state
            .shared
            .check_rate(&state.limits.asks_per_address, &key, &key.to_string())
            .await
            .map_err(Refused::TooFast)?;
    }
    if quota_full(state, owner).await {
        return Err(Refused::QuotaFull);
    }
    Ok(())
}

/// Whether `owner`'s stored conversations and files reached `CITED_USER_QUOTA_MB`. A
/// database that cannot answer does not block anybody.
pub async fn quota_full(state: &AppState, owner: &str) -> bool {
    match state.store.owner_bytes(owner).await {
        Ok(bytes) => u64::try_from(bytes).unwrap_or(0) >= state.config.capacity.user_quota_bytes,
        Err(error) => {
            tracing::warn!(%error, "cannot measure the stored conversations");
            false
        }
    }
}

/// The address the request being handled comes from (see `web::guard::client_address`).
pub fn request_address() -> Option<std::net::IpAddr> {
    let parts = leptos::prelude::use_context::<axum::http::request::Parts>()?;
    parts
        .extensions
        .get::<ClientAddress>()
        .map(|address| address.0)
}

/// The client's address, as the guard worked it out (the peer, or the address a trusted
/// proxy forwards).
#[derive(Clone, Copy, Debug)]
pub struct ClientAddress(pub std::net::IpAddr);

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

/// Whether an `Accept-Encoding` header takes gzip: `gzip` with a q above 0, or, when it does
/// not name gzip, `*` with one.
pub fn takes_gzip(accept_encoding: &str) -> bool {
    let (mut gzip, mut any) = (None, None);
    for item in accept_encoding.split(',') {
        let mut pieces = item.split(';');
        let name = pieces.next().unwrap_or_default().trim();
        let q = pieces
            .find_map(|piece| piece.trim().strip_prefix("q="))
            .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok());
        let taken = q.is_some_and(|q| q > 0.0);
        if name.eq_ignore_ascii_case("gzip") {
            gzip = Some(taken);
        } else if name == "*" {
            any = Some(taken);
        }
    }
    gzip.or(any).unwrap_or(false)
}

/// Whether the answer stream a server function is about to return goes out gzipped
/// (`ssr::framing::body`): when the request takes gzip. The response then says so.
pub fn gzip_stream() -> bool {
    use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, VARY};
    use axum::http::HeaderValue;

    let takes = leptos::prelude::use_context::<axum::http::request::Parts>().is_some_and(|parts| {
        parts
            .headers
            .get_all(ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(takes_gzip)
    });
    let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() else {
        return false;
    };
    if takes {
        response.insert_header(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response.append_header(VARY, HeaderValue::from_static("accept-encoding"));
    takes
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
    if state.config.access.auth != Auth::Off {
        // Signed-in sessions are made by signing in, never here.
        return Err(reject(AppError::NoSession));
    }
    let session = state.sessions.create(Instant::now());
    let id = session.id.to_string();
    save_new(&state, &session).await;
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        if let Some(value) = session_cookie(&state, Some(&id)) {
            response.append_header(SET_COOKIE, value);
        }
    }
    tracing::debug!(session = ?session.id, "new session");
    Ok(session)
}

/// A new anonymous session for a plain-HTTP route, with the cookie that names it; `None`
/// when people sign in (their sessions are made by signing in).
pub async fn mint(state: &AppState) -> Option<(Arc<Session>, axum::http::HeaderValue)> {
    if state.config.access.auth != Auth::Off {
        return None;
    }
    let session = state.sessions.create(Instant::now());
    let cookie = session_cookie(state, Some(&session.id.to_string()))?;
    save_new(state, &session).await;
    Some((session, cookie))
}

/// Saves the session's settings and current conversation for its browser. A signed-in
/// browser's row is only updated, never made again: signing out deletes it for good.
pub async fn remember(state: &AppState, session: &Session) {
    let browser = stored_browser(session);
    let id = session.id.to_string();
    let saved = if session.user.is_some() {
        state.store.update_browser(&id, &browser).await.map(|_| ())
    } else {
        state.store.save_browser(&id, &browser).await
    };
    if let Err(error) = saved {
        tracing::warn!(%error, "cannot save the browser's state");
    }
}

#[cfg(test)]
mod tests {
    use super::takes_gzip;

    #[test]
    fn accept_encoding_takes_gzip_unless_its_q_is_zero() {
        for header in [
            "gzip",
            "gzip, deflate, br, zstd",
            "br;q=1.0, GZIP;q=0.5",
            "*",
            "br, *;q=0.1",
        ] {
            assert!(takes_gzip(header), "{header}");
        }
        for header in [
            "",
            "identity",
            "br",
            "gzip;q=0",
            "gzip;q=0.0, *",
            "*;q=0",
            "gzip;q=x",
        ] {
            assert!(!takes_gzip(header), "{header}");
        }
    }
}
