use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{Mode, Settings};

/// Changes the caller's mode and/or Chat search switch and returns the settings now in
/// force. Fields left out stay as they are.
#[server(prefix = "/api", endpoint = "update_settings")]
pub async fn update_settings(
    #[server(default)] mode: Option<Mode>,
    #[server(default)] search_enabled: Option<bool>,
) -> Result<Settings, AppError> {
    let session = crate::ssr::session::current().ok_or(AppError::NoSession)?;
    let settings = session.update_settings(|settings| {
        if let Some(mode) = mode {
            settings.mode = mode;
        }
        if let Some(search_enabled) = search_enabled {
            settings.search_enabled = search_enabled;
        }
    });
    tracing::info!(session = ?session.id, mode = settings.mode.as_str(), search = settings.search_enabled, "settings updated");
    Ok(settings)
}
