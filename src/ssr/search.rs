//! Web search: the `SearchProvider` trait, its options, results and typed errors.
//!
//! Every failure is a [`SearchError`] variant the pipelines branch on, and each one knows
//! how to tell a user what happened and what to fix (`ssr::messages`). A
//! failing search never fails an answer: the pipelines degrade to answering without it.

pub mod cache;
pub mod health;
pub mod searxng;

use std::time::Duration;

use async_trait::async_trait;

use crate::model::Source;

/// `time_range` values SearXNG accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeRange {
    Day,
    Week,
    Month,
    Year,
}

impl From<crate::model::Period> for TimeRange {
    fn from(period: crate::model::Period) -> TimeRange {
        match period {
            crate::model::Period::Day => TimeRange::Day,
            crate::model::Period::Week => TimeRange::Week,
            crate::model::Period::Month => TimeRange::Month,
            crate::model::Period::Year => TimeRange::Year,
        }
    }
}

impl TimeRange {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeRange::Day => "day",
            TimeRange::Week => "week",
            TimeRange::Month => "month",
            TimeRange::Year => "year",
        }
    }
}

/// What to search for besides the query. `Default` is a plain web search.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SearchOptions {
    /// A SearXNG language code; `None` follows `CITED_SEARCH_LANGUAGE` (auto: zh-CN for
    /// queries with Han characters).
    pub language: Option<String>,
    /// 1-based result page.
    pub page: u32,
    pub categories: Vec<String>,
    /// SearXNG engine names, e.g. `wikipedia` or `baidu`.
    pub engines: Vec<String>,
    /// 0 (off), 1 (moderate) or 2 (strict); `None` uses the instance's default.
    pub safesearch: Option<u8>,
    pub time_range: Option<TimeRange>,
    /// How many results to keep; `None` uses `CITED_SEARCH_RESULTS`.
    pub max_results: Option<usize>,
    /// How much of each snippet to keep; `None` uses `CITED_SNIPPET_CHARS`.
    pub snippet_chars: Option<usize>,
}

/// A successful search. `sources` may be empty: SearXNG answered but found nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SearchResults {
    pub query: String,
    pub sources: Vec<Source>,
    /// Direct answers some engines give (`answers[]`), as text.
    pub answers: Vec<String>,
    pub suggestions: Vec<String>,
    /// Engines that failed, with SearXNG's reason (`timeout`, `HTTP connection error`, …).
    pub unresponsive_engines: Vec<(String, String)>,
    /// Results dropped because they were malformed (no URL, not http(s), …).
    pub skipped: usize,
    /// One of several sources failed: usable, but not worth caching.
    pub partial: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search at {url} took longer than {} s", timeout.as_secs())]
    Timeout { url: String, timeout: Duration },
    #[error("cannot connect to SearXNG at {url}")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("SearXNG at {url} answered 403: JSON output is disabled")]
    JsonDisabled { url: String },
    #[error("SearXNG at {url} answered 429: its limiter blocks this client")]
    RateLimited { url: String },
    #[error("SearXNG at {url} redirected to {location}")]
    Redirect { url: String, location: String },
    #[error("SearXNG at {url} rejected the request: {message}")]
    BadRequest { url: String, message: String },
    #[error("SearXNG at {url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("SearXNG at {url} answered {content_type} instead of JSON")]
    NotJson { url: String, content_type: String },
    #[error("SearXNG at {url} sent JSON that cannot be read")]
    Malformed {
        url: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("no results: every engine failed ({})", engine_names(.unresponsive))]
    EnginesFailed { unresponsive: Vec<(String, String)> },
    #[error("search request to {url} failed")]
    Transport {
        url: String,
        #[source]
        source: reqwest::Error,
    },
}

impl SearchError {
    /// A short name of the failure, for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            SearchError::Timeout { .. } => "timeout",
            SearchError::Unreachable { .. } => "unreachable",
            SearchError::JsonDisabled { .. } => "json_disabled",
            SearchError::RateLimited { .. } => "rate_limited",
            SearchError::Redirect { .. } => "redirect",
            SearchError::BadRequest { .. } => "bad_request",
            SearchError::Status { .. } => "status",
            SearchError::NotJson { .. } => "not_json",
            SearchError::Malformed { .. } => "malformed",
            SearchError::EnginesFailed { .. } => "engines_failed",
            SearchError::Transport { .. } => "transport",
        }
    }
}

fn engine_names(engines: &[(String, String)]) -> String {
    engines
        .iter()
        .map(|(name, reason)| format!("{name}: {reason}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl SearchError {
    /// Short status-line label: 搜索超时 or 搜索服务不可用.
    pub fn is_timeout(&self) -> bool {
        matches!(self, SearchError::Timeout { .. })
    }
}

/// Which source a [`SearchProvider`] searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// SearXNG.
    Web,
    /// The local knowledge base.
    Knowledge,
    /// SearXNG and the knowledge base together.
    Combined,
}

/// A source of search results: SearXNG, the local knowledge base, or both.
#[async_trait]
pub trait SearchProvider: Send + Sync {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError>;

    /// What kind of source this is; the session cache keys results by it, so sources
    /// never answer for each other.
    fn kind(&self) -> ProviderKind {
        ProviderKind::Web
    }
}

/// SearXNG and the knowledge base searched together: web results first, then knowledge.
/// One failing is logged and the other's results stand; both failing is the web's error.
pub struct Combined {
    pub web: std::sync::Arc<dyn SearchProvider>,
    pub knowledge: std::sync::Arc<dyn SearchProvider>,
}

#[async_trait]
impl SearchProvider for Combined {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let (web, knowledge) = futures_util::future::join(
            self.web.search(query, options),
            self.knowledge.search(query, options),
        )
        .await;
        match (web, knowledge) {
            (Ok(mut web), Ok(knowledge)) => {
                web.sources.extend(knowledge.sources);
                Ok(web)
            }
            (Ok(mut web), Err(error)) => {
                tracing::warn!(%error, "knowledge base search failed");
                web.partial = true;
                Ok(web)
            }
            (Err(error), Ok(mut knowledge)) => {
                tracing::warn!(%error, "web search failed; knowledge results only");
                knowledge.partial = true;
                Ok(knowledge)
            }
            (Err(error), Err(_)) => Err(error),
        }
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Combined
    }
}
