use leptos::prelude::*;

use crate::error::AppError;
use crate::model::Setup;

/// Whether a model writes the answers and SearXNG is usable, for the empty page. A
/// SearXNG that does not answer within two seconds counts as not usable; the page never
/// waits longer for it.
#[server(prefix = "/api", endpoint = "setup")]
pub async fn get_setup() -> Result<Setup, AppError> {
    use std::time::Duration;

    let state = crate::ssr::request::state()?;
    let model = state.llm.kind() == crate::ssr::llm::ModelKind::Remote;
    let checked = tokio::time::timeout(
        Duration::from_secs(2),
        state.search_health.status(Duration::from_secs(60)),
    )
    .await;
    Ok(Setup {
        model,
        web: matches!(checked, Ok(Ok(()))),
        knowledge: !state.knowledge.is_empty(),
    })
}
