use leptos::prelude::*;

use crate::error::AppError;
use crate::model::Settings;

/// The caller's session settings (mode and search switch).
#[server(prefix = "/api", endpoint = "get_settings")]
pub async fn get_settings() -> Result<Settings, AppError> {
    let session = crate::ssr::session::current().ok_or(AppError::NoSession)?;
    Ok(session.settings())
}
