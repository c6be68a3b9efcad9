//! Web search: the `SearchProvider` trait, its options, results and typed errors.
//!
//! Every failure is a [`SearchError`] variant the pipelines branch on, and each one knows
//! how to tell a user what happened and what to fix ([`SearchError::user_message`]). A
//! failing search never fails an answer: the pipelines degrade to answering without it.

pub mod cache;
pub mod health;
pub mod searxng;

use std::time::Duration;

use async_trait::async_trait;

use crate::i18n::Lang;
use crate::model::Source;

/// `time_range` values SearXNG accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeRange {
    Day,
    Week,
    Month,
    Year,
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
}

/// A successful search. `sources` may be empty: SearXNG answered but found nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

    /// What happened and how to fix it, for the person using cited.
    pub fn user_message(&self, lang: Lang) -> String {
        let zh = lang == Lang::ZhCn;
        match self {
            SearchError::Timeout { url, timeout } => {
                if zh {
                    format!("搜索超时：SearXNG（{url}）{} 秒内没有回答。本次回答不使用搜索；可稍后再试，或调大 CITED_SEARCH_TIMEOUT_SECS。", timeout.as_secs())
                } else {
                    format!("Search timed out: SearXNG ({url}) did not answer within {} s. This answer goes without search; try again later or raise CITED_SEARCH_TIMEOUT_SECS.", timeout.as_secs())
                }
            }
            SearchError::Unreachable { url, .. } => {
                if zh {
                    format!("搜索服务不可用：SearXNG 没有在 {url} 运行。启动它：`docker compose -f searxng/docker-compose.yml up -d`，或把 CITED_SEARXNG_URL 指向你的实例。")
                } else {
                    format!("SearXNG is not running at {url}: start it with `docker compose -f searxng/docker-compose.yml up -d`, or point CITED_SEARXNG_URL at your instance.")
                }
            }
            SearchError::JsonDisabled { url } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）未启用 JSON 输出（403）。在 settings.yml 的 `search.formats` 中加入 `json`（`formats: [html, json]`），然后重启 SearXNG。")
                } else {
                    format!("SearXNG ({url}) has JSON output disabled (403): add `json` to `search.formats` in settings.yml (`formats: [html, json]`), then restart SearXNG.")
                }
            }
            SearchError::RateLimited { url } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）的限流器拒绝了请求（429）。在 settings.yml 中设置 `server.limiter: false`，或把本应用的 IP 加入 limiter.toml 的 `pass_ip`。")
                } else {
                    format!("SearXNG ({url}) rate-limited cited (429): set `server.limiter: false` in settings.yml, or add cited's IP to `pass_ip` in limiter.toml.")
                }
            }
            SearchError::Redirect { url, location } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）把搜索重定向到了 {location}。以 `!!` 开头的查询会跳转到外部网站；若不是这个原因，请关闭限流器（`server.limiter: false`）。")
                } else {
                    format!("SearXNG ({url}) redirected the search to {location}. Queries starting with `!!` jump to external sites; otherwise turn the limiter off (`server.limiter: false`).")
                }
            }
            SearchError::BadRequest { url, message } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）拒绝了请求：{message}。请检查 CITED_SEARCH_LANGUAGE。")
                } else {
                    format!("SearXNG ({url}) rejected the request: {message}. Check CITED_SEARCH_LANGUAGE.")
                }
            }
            SearchError::Status { url, status } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）返回 {status}。查看它的日志：`docker compose -f searxng/docker-compose.yml logs searxng`。")
                } else {
                    format!("SearXNG ({url}) answered {status}: check its log with `docker compose -f searxng/docker-compose.yml logs searxng`.")
                }
            }
            SearchError::NotJson { url, content_type } => {
                if zh {
                    format!("搜索服务不可用：{url} 返回的是 {content_type} 而不是 JSON。CITED_SEARXNG_URL 是否指向 SearXNG？是否启用了 JSON 输出？")
                } else {
                    format!("{url} answered {content_type} instead of JSON: is CITED_SEARXNG_URL really SearXNG, with JSON output enabled?")
                }
            }
            SearchError::Malformed { url, .. } => {
                if zh {
                    format!("搜索服务不可用：SearXNG（{url}）返回的 JSON 无法解析（可能被截断）。请稍后再试。")
                } else {
                    format!("SearXNG ({url}) sent JSON that cannot be read (perhaps cut off). Try again later.")
                }
            }
            SearchError::EnginesFailed { unresponsive } => {
                let names: Vec<&str> = unresponsive.iter().map(|(name, _)| name.as_str()).collect();
                if zh {
                    format!("搜索无结果：所有搜索引擎都没有响应（{}）。它们可能被验证码或限流暂停；请在 SearXNG 中启用更多引擎，或稍后再试。", names.join("、"))
                } else {
                    format!("No results: every search engine failed ({}). They may be suspended by CAPTCHAs or rate limits; enable more engines in SearXNG or try again later.", names.join(", "))
                }
            }
            SearchError::Transport { url, .. } => {
                if zh {
                    format!("搜索服务不可用：与 SearXNG（{url}）的连接出错。请检查网络，或暂时关闭联网搜索。")
                } else {
                    format!("The connection to SearXNG ({url}) failed: check the network, or turn web search off for now.")
                }
            }
        }
    }
}

/// A source of search results: SearXNG, the local knowledge base, or both.
#[async_trait]
pub trait SearchProvider: Send + Sync {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError>;

    /// What the session cache keys results by, so sources never answer for each other.
    fn name(&self) -> &'static str {
        "web"
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

    fn name(&self) -> &'static str {
        "web+knowledge"
    }
}

/// True when the text contains Han (Chinese) characters.
pub fn has_han(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
    })
}

/// Whether a search was answered from the session's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    Hit,
    Miss,
}

/// Searches through the session's LRU cache: an identical query (same options) in the same
/// session is answered from memory, and only successful searches are remembered.
pub async fn cached_search(
    session: &crate::ssr::session::Session,
    provider: &dyn SearchProvider,
    query: &str,
    options: &SearchOptions,
) -> (Result<SearchResults, SearchError>, CacheUse) {
    let key = cache::CacheKey::new(query, options).from_source(provider.name());
    if let Some(results) = session.with_search_cache(|cache| cache.get(&key)) {
        tracing::info!(session = ?session.id, query, n_results = results.sources.len(), "search cache hit");
        return (Ok(results), CacheUse::Hit);
    }
    tracing::debug!(session = ?session.id, query, "search cache miss");
    let result = provider.search(query, options).await;
    match &result {
        Ok(results) if !results.partial => {
            session.with_search_cache(|cache| cache.put(key, results.clone()));
        }
        _ => {}
    }
    (result, CacheUse::Miss)
}
