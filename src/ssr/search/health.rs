//! Is SearXNG usable? `/healthz` says whether the process is up; `GET /search?format=json`
//! without `q` says whether JSON output is on (400 JSON: on; 403 HTML: off) without ever
//! reaching an upstream engine. Used at startup, by `cited doctor` and by the settings panel.

use reqwest::header::CONTENT_TYPE;
use reqwest::StatusCode;

use crate::ssr::search::searxng::{classify_send_error, Searxng};
use crate::ssr::search::SearchError;

/// Checks that SearXNG answers and has JSON output enabled.
pub async fn check(searxng: &Searxng) -> Result<(), SearchError> {
    let shown_url = searxng.shown_url().to_string();
    let healthz = searxng
        .http()
        .get(searxng.endpoint("healthz"))
        .timeout(searxng.timeout())
        .send()
        .await
        .map_err(|error| classify_send_error(error, &shown_url, searxng.timeout()))?;
    if !healthz.status().is_success() {
        return Err(SearchError::Status {
            url: shown_url,
            status: healthz.status().as_u16(),
        });
    }
    let probe = searxng
        .http()
        .get(searxng.endpoint("search"))
        .query(&[("format", "json")])
        .timeout(searxng.timeout())
        .send()
        .await
        .map_err(|error| classify_send_error(error, &shown_url, searxng.timeout()))?;
    let status = probe.status();
    let is_json = probe
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("json"));
    match status {
        StatusCode::BAD_REQUEST | StatusCode::OK if is_json => Ok(()),
        StatusCode::FORBIDDEN => Err(SearchError::JsonDisabled { url: shown_url }),
        StatusCode::TOO_MANY_REQUESTS => Err(SearchError::RateLimited { url: shown_url }),
        status if status.is_redirection() => Err(SearchError::Redirect {
            url: shown_url,
            location: probe
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("")
                .to_string(),
        }),
        status if !status.is_success() && status != StatusCode::BAD_REQUEST => {
            Err(SearchError::Status {
                url: shown_url,
                status: status.as_u16(),
            })
        }
        _ => Err(SearchError::NotJson {
            url: shown_url,
            content_type: probe
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("an unknown content type")
                .to_string(),
        }),
    }
}

/// The result of one check; shared, since `SearchError` cannot be cloned.
pub type Health = Result<(), std::sync::Arc<SearchError>>;

/// The last health check, shared by everyone who asks, refreshed when it is too old.
pub struct HealthMonitor {
    searxng: Searxng,
    last: tokio::sync::Mutex<Option<(std::time::Instant, Health)>>,
}

impl HealthMonitor {
    pub fn new(searxng: Searxng) -> HealthMonitor {
        HealthMonitor {
            searxng,
            last: tokio::sync::Mutex::new(None),
        }
    }

    pub fn url(&self) -> String {
        self.searxng.shown_url().to_string()
    }

    /// The health, checked again when the last check is older than `max_age`. Concurrent
    /// callers wait for one check instead of each probing SearXNG.
    pub async fn status(
        &self,
        max_age: std::time::Duration,
    ) -> Result<(), std::sync::Arc<SearchError>> {
        let mut last = self.last.lock().await;
        if let Some((checked, result)) = last.as_ref() {
            if checked.elapsed() <= max_age {
                return result.clone();
            }
        }
        let result = check(&self.searxng).await.map_err(std::sync::Arc::new);
        match &result {
            Ok(()) => tracing::info!(url = %self.url(), "SearXNG is up with JSON output on"),
            Err(error) => tracing::warn!(url = %self.url(), %error, "SearXNG is not usable"),
        }
        *last = Some((std::time::Instant::now(), result.clone()));
        result
    }
}
