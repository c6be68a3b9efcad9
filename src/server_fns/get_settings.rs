use leptos::prelude::*;

use crate::error::AppError;
use crate::model::Settings;

/// The caller's session settings (mode, search switch, sources, language), with the
/// server's defaults filled in where the session has not chosen.
#[server(prefix = "/api", endpoint = "get_settings")]
pub async fn get_settings() -> Result<Settings, AppError> {
    let settings = crate::ssr::request::current()
        .map(|session| session.settings())
        .unwrap_or_default();
    Ok(effective(settings))
}

/// `settings` with `sources` and `lang` resolved (CITED_SOURCES, Accept-Language).
#[cfg(feature = "ssr")]
pub fn effective(mut settings: Settings) -> Settings {
    if settings.sources.is_none() {
        settings.sources = use_context::<crate::ssr::state::AppState>().map(|s| s.config.sources);
    }
    if settings.lang.is_none() {
        settings.lang = Some(crate::ssr::request::request_lang());
    }
    settings
}
