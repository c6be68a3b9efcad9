//! The session of an HTTP request: `web::session_layer::attach` finds it from the
//! `cited_session` cookie (with [`find_session`]), and pages and server functions read it
//! (and the request's UI language) from the request, minting one when they must keep
//! something ([`session_or_mint`]). The cookie's name and shape are decided here.

use std::sync::Arc;
use std::time::Instant;

use axum::http::header::SET_COOKIE;
use axum::http::HeaderValue;

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

/// Stops the browser's running answer, in this instance or the one writing it; whether
/// there was one.
pub async fn stop_answer(state: &AppState, session: &Session) -> bool {
    session.stop_answer() || state.log.stop(&session.id.to_string()).await
}

/// What the store keeps of a session's browser.
pub fn stored_browser(session: &Session) -> StoredBrowser {
    StoredBrowser {
        settings: session.settings(),
        conversation: session.conversation_id(),
        user: session.user.clone(),
    }
}

/// Writes a newly minted session's browser (the one place a browser row is created).
pub async fn save_new(state: &AppState, session: &Session) {
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
