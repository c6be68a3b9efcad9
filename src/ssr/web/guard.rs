//! What every request passes before it reaches a route: the host name it names, where a
//! state-changing request comes from, the per-address rate limit, and the security headers
//! every response carries (a CSP whose only inline script is the hydration script, by
//! nonce).
//!
//! - **Host.** A page on another site can point its own name at 127.0.0.1 (DNS rebinding)
//!   and then read the app as same-origin. Requests must name an allowed host
//!   (`CITED_ALLOWED_HOSTS`; bound to loopback, the loopback names); others get 421.
//! - **Origin.** A `POST` (or any method that is not `GET`, `HEAD` or `OPTIONS`) from a
//!   browser must come from the app's own pages: `Sec-Fetch-Site` must be `same-origin` or
//!   `none`, else `Origin` must name the request's own host (or `CITED_PUBLIC_URL`). A
//!   request with neither header is not from a browser's page (curl, the CLI, an API
//!   client) and passes. Others get 403.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::ssr::config::AccessConfig;
use crate::ssr::request::CspNonce;
use crate::ssr::state::AppState;

/// The host a request names, lower-cased, without its port.
fn request_host(request: &Request) -> Option<String> {
    let raw = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_string()))?;
    Some(strip_port(&raw).to_ascii_lowercase())
}

/// `example.org:3000` → `example.org`; `[::1]:3000` → `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

pub fn host_allowed(access: &AccessConfig, host: Option<&str>) -> bool {
    match (&access.allowed_hosts, host) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(hosts), Some(host)) => hosts.iter().any(|allowed| allowed == host),
    }
}

/// Whether a state-changing request comes from the app's own pages (or from no page).
fn same_origin(access: &AccessConfig, request: &Request) -> bool {
    let headers = request.headers();
    if let Some(site) = headers
        .get("sec-fetch-site")
        .and_then(|value| value.to_str().ok())
    {
        return matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Ok(origin) = url::Url::parse(origin) else {
        // `Origin: null` (a sandboxed frame, a file) is never ours.
        return false;
    };
    let own = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_ascii_lowercase);
    let named = match (origin.host_str(), origin.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => return false,
    }
    .to_ascii_lowercase();
    if own.as_deref() == Some(named.as_str()) {
        return true;
    }
    access
        .public_url
        .as_ref()
        .is_some_and(|public| public.origin() == origin.origin())
}

/// The address a request comes from: the peer, or, when the peer is a trusted proxy
/// (`CITED_TRUSTED_PROXIES`, `CITED_AUTH_PROXY_FROM`), the last address it names in
/// `X-Forwarded-For` (the one it saw connect).
pub fn client_address(access: &AccessConfig, request: &Request) -> Option<IpAddr> {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())?;
    if access.trusted_proxies.iter().any(|net| net.contains(peer)) {
        let forwarded = request
            .headers()
            .get("x-forwarded-for")
            .and_then(|value| value.to_str().ok())
            .and_then(|list| list.rsplit(',').next())
            .and_then(|last| last.trim().parse::<IpAddr>().ok());
        return Some(forwarded.unwrap_or(peer));
    }
    Some(peer)
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

/// The middleware.
pub async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let access = &state.config.access;
    let path = request.uri().path().to_string();
    // Probes and scrapers name the machine by its address, and come often.
    let route = super::routes::of(&path);
    let exempt = route.probe();
    if !exempt && !host_allowed(access, request_host(&request).as_deref()) {
        tracing::debug!(path, "request for a host name that is not allowed");
        return with_headers(
            plain(
                StatusCode::MISDIRECTED_REQUEST,
                "This server does not answer to that host name (CITED_ALLOWED_HOSTS).\n",
            ),
            access,
            None,
        );
    }
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if !safe && !same_origin(access, &request) {
        tracing::info!(path, "cross-site request refused");
        return with_headers(
            plain(
                StatusCode::FORBIDDEN,
                "Cross-site requests are not accepted.\n",
            ),
            access,
            None,
        );
    }
    let address = client_address(access, &request);
    if let Some(address) = address {
        request
            .extensions_mut()
            .insert(crate::ssr::request::ClientAddress(address));
    }
    if !route.unlimited() {
        if let Some(address) = address {
            let key = crate::ssr::limits::address_key(address);
            let rate = match route.kind {
                super::routes::Kind::Media => &state.limits.media,
                // Anyone with a link may open a shared conversation: a rate of its own.
                super::routes::Kind::Share => &state.limits.shares,
                _ => &state.limits.requests,
            };
            let checked = state.shared.check_rate(rate, &key, &key.to_string()).await;
            if let Err(wait) = checked {
                crate::ssr::metrics::metrics()
                    .limited
                    .with_label_values(&[rate.name])
                    .inc();
                let wait = wait.as_secs().max(1);
                let mut response = plain(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too many requests from this address; try again shortly.\n",
                );
                if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
                return with_headers(response, access, None);
            }
        }
    }
    let nonce = CspNonce(mint_nonce());
    request.extensions_mut().insert(nonce.clone());
    let response = next.run(request).await;
    with_headers(response, access, Some(&nonce))
}

fn mint_nonce() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: a nonce nobody can guess is impossible, so the page gets none and
        // its script is refused rather than allowed for everyone.
        return String::new();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The security headers every response carries.
fn with_headers(
    mut response: Response,
    access: &AccessConfig,
    nonce: Option<&CspNonce>,
) -> Response {
    let script = match nonce {
        Some(CspNonce(nonce)) if !nonce.is_empty() => {
            format!("'self' 'nonce-{nonce}' 'wasm-unsafe-eval'")
        }
        _ => "'self' 'wasm-unsafe-eval'".to_string(),
    };
    let csp = format!(
        "default-src 'self'; script-src {script}; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    );
    let headers = response.headers_mut();
    // A handler's own, stricter policy stands (the sandbox of `/media`).
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        if let Ok(value) = HeaderValue::from_str(&csp) {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    if access.secure_cookies() {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    response
}

/// Refuses a body larger than the request's limit: at once from `Content-Length` (413), or
/// as soon as a streamed body passes it (its reader fails).
pub async fn body_limit(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let capacity = &state.config.capacity;
    let upload = super::routes::of(request.uri().path()).upload;
    let limit = if upload {
        capacity.file_bytes.max(capacity.body_bytes)
    } else {
        capacity.body_bytes
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        if upload {
            let lang = crate::ssr::request::lang_for(None, request.headers());
            let error = crate::ssr::files::FileError::TooLarge {
                max_mb: limit / 1024 / 1024,
            };
            let message = crate::ssr::files::message(lang, &error);
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                axum::Json(serde_json::json!({ "error": message })),
            )
                .into_response();
        }
        return plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The request body is too large.\n",
        );
    }
    let (parts, body) = request.into_parts();
    let body = axum::body::Body::new(http_body_util::Limited::new(body, limit));
    next.run(Request::from_parts(parts, body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped() {
        assert_eq!(strip_port("localhost:3000"), "localhost");
        assert_eq!(strip_port("[::1]:3000"), "[::1]");
        assert_eq!(strip_port("[::1]"), "[::1]");
        assert_eq!(strip_port("example.org"), "example.org");
    }
}
