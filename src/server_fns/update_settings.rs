use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{Mode, Settings, Sources};

/// Changes the caller's mode, Chat search switch, sources, UI language (`zh-CN`, `en`),
/// focus and/or time range (`any`, `day`, `week`, `month`, `year`) and returns the
/// settings now in force. Fields left out stay as they are.
#[server(prefix = "/api", endpoint = "update_settings")]
pub async fn update_settings(
    #[server(default)] mode: Option<Mode>,
    #[server(default)] search_enabled: Option<bool>,
    #[server(default)] sources: Option<Sources>,
    #[server(default)] lang: Option<String>,
    #[server(default)] focus: Option<crate::model::Focus>,
    #[server(default)] period: Option<String>,
) -> Result<Settings, AppError> {
    let session = crate::ssr::request::session_or_mint().await?;
    let lang = match lang {
        Some(raw) => Some(crate::model::Lang::parse(&raw).ok_or_else(|| {
            crate::ssr::request::reject(AppError::BadInput(format!(
                "unknown language {raw:?}; use zh-CN or en"
            )))
        })?),
        None => None,
    };
    // `any` lifts the time limit.
    let period = match period.as_deref().map(str::trim) {
        None => None,
        Some("any") => Some(None),
        Some(raw) => Some(Some(crate::model::Period::parse(raw).ok_or_else(|| {
            crate::ssr::request::reject(AppError::BadInput(format!(
                "unknown time range {raw:?}; use any, day, week, month or year"
            )))
        })?)),
    };
    let settings = session.update_settings(|settings| {
        if let Some(focus) = focus {
            settings.focus = focus;
        }
        if let Some(period) = period {
            settings.period = period;
        }
        if let Some(mode) = mode {
            settings.mode = mode;
        }
        if let Some(search_enabled) = search_enabled {
            settings.search_enabled = search_enabled;
        }
        if let Some(sources) = sources {
            settings.sources = Some(sources);
        }
        if let Some(lang) = lang {
            settings.lang = Some(lang);
        }
    });
    if let Ok(state) = crate::ssr::request::state() {
        crate::ssr::request::remember(&state, &session).await;
    }
    tracing::info!(session = ?session.id, mode = settings.mode.as_str(), search = settings.search_enabled, sources = ?settings.sources, lang = ?settings.lang, "settings updated");
    Ok(crate::server_fns::get_settings::effective(settings))
}
