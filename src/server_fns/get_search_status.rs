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
    Ok(ServiceStatus {
        ok: result.is_ok(),
        url: state.search_health.url(),
        message: result
            .err()
            .map(|error| {
                crate::ssr::messages::search_error(crate::ssr::request::request_lang(), &error)
            })
            .unwrap_or_default(),
    })
}
