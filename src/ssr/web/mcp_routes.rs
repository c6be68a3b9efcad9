//! `/mcp`: cited's MCP server (`ssr::mcp`) over MCP's streamable HTTP transport. The
//! request has passed the same middleware as every route: the host and origin checks, the
//! per-address rate, and the sign-in, where an API key (`Authorization: Bearer cited_…`)
//! answers for its user as on `/v1/` and is required when people sign in. The MCP handler
//! reads who calls from what the middleware left on the request.

use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::ssr::mcp::{Caller, CitedMcp, Who};
use crate::ssr::request::{ClientAddress, CurrentSession};
use crate::ssr::state::AppState;

/// The MCP service, one handler per MCP session; its streams end when the server shuts
/// down.
pub fn service(state: &AppState) -> StreamableHttpService<CitedMcp, LocalSessionManager> {
    // The host is checked before any route (`guard`, `CITED_ALLOWED_HOSTS`), so the
    // transport's own loopback-only list would only refuse a deployment's real name.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(state.shutdown.child_token());
    // A session idle this long is closed, and its calls with it: longer than the longest
    // answer (a Research run and its conclusion's two model calls), whose progress may be
    // silent when the client asked for none.
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(
        state.config.research.deadline
            + 2 * state.config.limits.call_deadline
            + std::time::Duration::from_secs(60),
    );
    let state = state.clone();
    StreamableHttpService::new(
        move || Ok(CitedMcp::new(state.clone(), Who::PerRequest(caller))),
        Arc::new(sessions),
        config,
    )
}

/// Who sent the MCP request: the key's (or the signed-in browser's) user, and the address.
fn caller(extensions: &rmcp::model::Extensions) -> Caller {
    let Some(parts) = extensions.get::<Parts>() else {
        return Caller {
            limited: true,
            ..Caller::default()
        };
    };
    Caller {
        user: parts
            .extensions
            .get::<CurrentSession>()
            .and_then(|session| session.0.user.clone()),
        address: parts.extensions.get::<ClientAddress>().map(|a| a.0),
        limited: true,
    }
}
