use leptos::prelude::*;

use crate::error::AppError;

/// The stop button: cancels the answer being written in this session. Returns whether
/// there was one.
#[server(prefix = "/api", endpoint = "stop")]
pub async fn stop_answer() -> Result<bool, AppError> {
    // A browser without a session has nothing to stop.
    let Some(session) = crate::ssr::request::current() else {
        return Ok(false);
    };
    let state = crate::ssr::request::state()?;
    // Written here, or by another instance.
    let stopped = crate::ssr::request::stop_answer(&state, &session).await;
    tracing::info!(session = ?session.id, stopped, "stop requested");
    Ok(stopped)
}
