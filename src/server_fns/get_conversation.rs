use leptos::prelude::*;

use crate::error::AppError;
use crate::model::Exchange;

/// The session's questions and answers so far, oldest first.
#[server(prefix = "/api", endpoint = "conversation")]
pub async fn get_conversation() -> Result<Vec<Exchange>, AppError> {
    Ok(crate::ssr::request::current()
        .map(|session| session.conversation())
        .unwrap_or_default()
        .into_iter()
        .map(crate::citation::render::for_browser)
        .collect())
}
