use leptos::prelude::*;

use crate::error::AppError;
use crate::model::ServiceStatus;

/// Whether SearXNG answers with JSON output on, and if not, what to fix. The last check is
/// reused for a minute; `refresh` asks for a new one (at most one every 5 s).
#[server(prefix = "/api", endpoint = "search_status")]
pub async fn get_search_status(
    #[server(default)] refresh: bool,
) -> Result<ServiceStatus, AppError> {
    use std::time::Duration;

    let state = crate::ssr::request::state()?;
    let max_age = Duration::from_secs(if refresh { 5 } else { 60 });
    let result = state.search_health.status(max_age).await;
    let url = state.search_health.url();
    let message = result
        .as_ref()
        .err()
        .map(|error| crate::ssr::messages::search_error(crate::ssr::request::request_lang(), error))
        .unwrap_or_default();
    // When people sign in, the app is shared: the internal address is the operator's
    // business, not every visitor's.
    let (url, message) = if state.config.access.auth == crate::ssr::config::Auth::Off {
        (url, message)
    } else {
        (String::new(), message.replace(&url, "SearXNG"))
    };
    Ok(ServiceStatus {
        ok: result.is_ok(),
        url,
        message,
    })
}
