// One optional argument per setting: a form posts only what changed.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{Mode, Settings, Sources};

/// Changes the caller's mode, Chat search switch, sources, UI language (`zh-CN`, `en`),
/// focus, time range (`any`, `day`, `week`, `month`, `year`), site (`any`: every site) and/or
/// model (an id from `list_models`; `default`: CITED_LLM_MODEL) and returns the settings
/// now in force. Fields left out stay as they are.
#[server(prefix = "/api", endpoint = "update_settings")]
pub async fn update_settings(
    #[server(default)] mode: Option<Mode>,
    #[server(default)] search_enabled: Option<bool>,
    #[server(default)] sources: Option<Sources>,
    #[server(default)] lang: Option<String>,
    #[server(default)] focus: Option<crate::model::Focus>,
    #[server(default)] period: Option<String>,
    #[server(default)] site: Option<String>,
    #[server(default)] model: Option<String>,
) -> Result<Settings, AppError> {
    let session = crate::ssr::request::session_or_mint().await?;
    // `any` (an empty field) searches everywhere.
    let site = match site.as_deref().map(str::trim) {
        None => None,
        Some("" | "any") => Some(None),
        Some(raw) => Some(Some(crate::text::valid_site(raw).ok_or_else(|| {
            let t = crate::ssr::request::request_lang().texts();
            crate::ssr::request::reject(AppError::BadInput(t.bad_site.replace("{site}", raw)))
        })?)),
    };
    // `default` (or nothing) goes back to CITED_LLM_MODEL; anything else must be offered.
    let model = match model.as_deref().map(str::trim) {
        None => None,
        Some("" | "default") => Some(None),
        Some(id) => {
            let state = crate::ssr::request::state()?;
            if !state.models.offers(id).await {
                let t = crate::ssr::request::request_lang().texts();
                return Err(crate::ssr::request::reject(AppError::BadInput(
                    t.unknown_model.replace("{model}", id),
                )));
            }
            Some(Some(id.to_string()))
        }
    };
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
        if let Some(site) = site {
            settings.site = site;
        }
        if let Some(model) = model {
            settings.model = model;
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
