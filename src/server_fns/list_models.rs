use leptos::prelude::*;

use crate::error::AppError;
use crate::model::ModelChoices;

/// The models the picker offers (every configured endpoint's `/models`) and the one the
/// caller's next question goes to. No options when no model is configured.
#[server(prefix = "/api", endpoint = "list_models")]
pub async fn list_models() -> Result<ModelChoices, AppError> {
    let state = crate::ssr::request::state()?;
    let options = state.models.list().await;
    let chosen = crate::ssr::request::current().and_then(|session| session.settings().model);
    let current = chosen
        .filter(|id| options.iter().any(|option| &option.id == id))
        .or_else(|| state.models.default_id().map(str::to_string));
    Ok(ModelChoices { options, current })
}
