//! The SearXNG client: `GET /search?format=json` over reqwest, with SearXNG's real quirks
//! handled (see shared/notes/searxng.md): redirects are never followed (an external bang
//! `!!x` answers 302 even for JSON), the limiter wants browser-like headers, every string
//! may be `null`, `answers` are strings in old versions and objects in new ones, and the
//! `results` order is SearXNG's ranking even though it is not sorted by score.
//!
//! Parsing is lenient: unknown fields are ignored, and a malformed single result is
//! skipped (and logged) while the rest are used.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, ACCEPT_LANGUAGE, CONTENT_TYPE, LOCATION, USER_AGENT,
};
use reqwest::StatusCode;
use serde_json::Value;
use url::Url;

use crate::citation::prompt::truncate_chars;
use crate::citation::urls;
use crate::model::{Source, SourceKind};
use crate::ssr::config::{Config, SearchLanguage};
use crate::ssr::net::USER_AGENT_VALUE;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::text::has_han;

#[derive(Clone)]
pub struct Searxng {
    http: reqwest::Client,
    base: Url,
    /// `base` without credentials, for logs and messages.
    shown: String,
    timeout: Duration,
    language: SearchLanguage,
    max_results: usize,
    snippet_chars: usize,
}

impl Searxng {
    pub fn new(config: &Config) -> Searxng {
        crate::ssr::net::install_crypto_provider();
        let mut headers = HeaderMap::new();
        headers.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        // The limiter wants text/html in Accept, gzip or deflate in Accept-Encoding (reqwest
        // adds `gzip` itself) and a non-empty Accept-Language.
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("text/html,application/json;q=0.9,*/*;q=0.8"),
        );
        headers.insert(
            ACCEPT_LANGUAGE,
            HeaderValue::from_static("zh-CN,zh;q=0.9,en;q=0.8"),
        );
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.search_timeout)
            .gzip(true)
            .build()
            .expect("a client with static headers and rustls always builds");
        Searxng {
            http,
            shown: crate::ssr::config::redacted(&config.searxng_url),
            base: config.searxng_url.clone(),
            timeout: config.search_timeout,
            language: config.search_language.clone(),
            max_results: config.search_results,
            snippet_chars: config.snippet_chars,
        }
    }

    /// The instance's URL as it may be shown (no credentials).
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `{base}/search`, keeping any path prefix of the base (`https://host/searx/`).
    pub fn endpoint(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let prefix = url.path().trim_end_matches('/').to_string();
        url.set_path(&format!("{prefix}/{path}"));
        url.set_query(None);
        url
    }

    fn language_for(&self, query: &str, options: &SearchOptions) -> String {
        if let Some(language) = &options.language {
            return language.clone();
        }
        match &self.language {
            SearchLanguage::Fixed(code) => code.clone(),
            SearchLanguage::Auto if has_han(query) => "zh-CN".to_string(),
            SearchLanguage::Auto => "auto".to_string(),
        }
    }
}

#[async_trait]
impl SearchProvider for Searxng {
    // At debug: the query comes from the question, which info logs never hold.
    #[tracing::instrument(level = "debug", skip_all, fields(query = %query))]
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let url = self.endpoint("search");
        let shown_url = self.shown.clone();
        let mut params: Vec<(&str, String)> = vec![
            ("q", query.to_string()),
            ("format", "json".to_string()),
            ("language", self.language_for(query, options)),
            ("pageno", options.page.max(1).to_string()),
            // Unresponsive-engine messages follow the UI locale; English keeps logs readable.
            ("locale", "en".to_string()),
        ];
        if !options.categories.is_empty() {
            params.push(("categories", options.categories.join(",")));
        }
        if !options.engines.is_empty() {
            params.push(("engines", options.engines.join(",")));
        }
        if let Some(safesearch) = options.safesearch {
            params.push(("safesearch", safesearch.min(2).to_string()));
        }
        if let Some(time_range) = options.time_range {
            params.push(("time_range", time_range.as_str().to_string()));
        }
        let started = std::time::Instant::now();
        let response = self
            .http
            .get(url)
            .query(&params)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|error| classify_send_error(error, &shown_url, self.timeout))?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string();
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = response
            .bytes()
            .await
            .map_err(|error| classify_send_error(error, &shown_url, self.timeout))?;
        let result = interpret(status, &content_type, &location, &body, &shown_url).map(|raw| {
            normalise(
                raw,
                query,
                options.max_results.unwrap_or(self.max_results),
                options.snippet_chars.unwrap_or(self.snippet_chars),
            )
        });
        match &result {
            Ok(results) => tracing::info!(
                n_results = results.sources.len(),
                skipped = results.skipped,
                unresponsive = results.unresponsive_engines.len(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "search done"
            ),
            Err(error) => {
                tracing::warn!(%error, elapsed_ms = started.elapsed().as_millis() as u64, "search failed")
            }
        }
        let results = result?;
        if results.sources.is_empty() && !results.unresponsive_engines.is_empty() {
            return Err(SearchError::EnginesFailed {
                unresponsive: results.unresponsive_engines,
            });
        }
        Ok(results)
    }
}

pub(crate) fn classify_send_error(
    error: reqwest::Error,
    url: &str,
    timeout: Duration,
) -> SearchError {
    let url = url.to_string();
    if error.is_timeout() {
        SearchError::Timeout { url, timeout }
    } else if error.is_connect() {
        SearchError::Unreachable { url, source: error }
    } else {
        SearchError::Transport { url, source: error }
    }
}

/// Maps an HTTP answer from `/search` to parsed JSON or the matching error.
pub(crate) fn interpret(
    status: StatusCode,
    content_type: &str,
    location: &str,
    body: &[u8],
    url: &str,
) -> Result<RawResponse, SearchError> {
    let url = url.to_string();
    if status.is_redirection() {
        return Err(SearchError::Redirect {
            url,
            location: location.to_string(),
        });
    }
    match status {
        StatusCode::FORBIDDEN => return Err(SearchError::JsonDisabled { url }),
        StatusCode::TOO_MANY_REQUESTS => return Err(SearchError::RateLimited { url }),
        StatusCode::BAD_REQUEST => {
            let message = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|value| {
                    value
                        .get("error")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "bad request".to_string());
            return Err(SearchError::BadRequest { url, message });
        }
        status if !status.is_success() => {
            return Err(SearchError::Status {
                url,
                status: status.as_u16(),
            })
        }
        _ => {}
    }
    let looks_like_json = content_type.contains("json")
        || body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !looks_like_json || content_type.contains("html") {
        return Err(SearchError::NotJson {
            url,
            content_type: if content_type.is_empty() {
                "an unknown content type".to_string()
            } else {
                content_type.to_string()
            },
        });
    }
    parse(body).map_err(|source| SearchError::Malformed { url, source })
}

/// The top level of a SearXNG JSON answer, each part kept as raw JSON so that one odd
/// value never spoils the rest.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct RawResponse {
    #[serde(default)]
    query: Option<Value>,
    #[serde(default)]
    results: Option<Value>,
    #[serde(default)]
    answers: Option<Value>,
    #[serde(default)]
    suggestions: Option<Value>,
    #[serde(default)]
    unresponsive_engines: Option<Value>,
}

pub(crate) fn parse(body: &[u8]) -> Result<RawResponse, serde_json::Error> {
    serde_json::from_slice(body)
}

fn as_array(value: &Option<Value>) -> &[Value] {
    value
        .as_ref()
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
}

/// Turns SearXNG's answer into cited's sources: its order kept, malformed results skipped,
/// the top `max_results` kept, snippets cut on a character boundary.
pub(crate) fn normalise(
    raw: RawResponse,
    query: &str,
    max_results: usize,
    snippet_chars: usize,
) -> SearchResults {
    let mut sources = Vec::new();
    let mut skipped = 0;
    for (position, result) in as_array(&raw.results).iter().enumerate() {
        match source_from(result, snippet_chars) {
            Some(source) => {
                if sources.len() < max_results {
                    sources.push(source);
                }
            }
            None => {
                skipped += 1;
                tracing::warn!(position, result = %truncate_chars(&result.to_string(), 300), "skipped a malformed search result");
            }
        }
    }
    let answers = as_array(&raw.answers)
        .iter()
        .filter_map(|answer| match answer {
            Value::String(text) => Some(text.clone()),
            Value::Object(_) => text(answer, "answer"),
            _ => None,
        })
        .collect();
    let suggestions = as_array(&raw.suggestions)
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    let unresponsive_engines = as_array(&raw.unresponsive_engines)
        .iter()
        .filter_map(|pair| {
            let pair = pair.as_array()?;
            let name = pair.first()?.as_str()?.to_string();
            let reason = pair
                .get(1)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            Some((name, reason))
        })
        .collect();
    SearchResults {
        query: raw
            .query
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or(query)
            .to_string(),
        sources,
        answers,
        suggestions,
        unresponsive_engines,
        skipped,
        partial: false,
    }
}

fn source_from(result: &Value, snippet_chars: usize) -> Option<Source> {
    let url = text(result, "url")?;
    if !urls::is_web_link(&url) {
        return None;
    }
    let title = text(result, "title").unwrap_or_else(|| urls::domain(&url));
    let snippet = text(result, "content")
        .map(|content| truncate_chars(&content, snippet_chars))
        .unwrap_or_default();
    let mut engines: Vec<String> = result
        .get("engines")
        .and_then(Value::as_array)
        .map(|engines| {
            engines
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if engines.is_empty() {
        engines.extend(text(result, "engine"));
    }
    // `engines` comes from a Python set: sort it so equal results compare equal.
    engines.sort();
    Some(Source {
        domain: urls::domain(&url),
        url,
        title,
        snippet,
        engines,
        published: text(result, "publishedDate"),
        kind: SourceKind::Web,
        image: ["thumbnail_src", "thumbnail", "img_src"]
            .into_iter()
            .filter_map(|key| text(result, key))
            .find(|src| urls::is_web_link(src)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/src/tests/fixtures/searxng/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    }

    fn parse_fixture(name: &str, max: usize) -> SearchResults {
        let raw = interpret(
            StatusCode::OK,
            "application/json",
            "",
            &fixture(name),
            "http://sx",
        )
        .unwrap();
        normalise(raw, "q", max, 200)
    }

    #[test]
    fn chinese_fixture_keeps_searxng_order_and_top_n() {
        let results = parse_fixture("zh_quantum_8_results.json", 5);
        assert_eq!(results.query, "量子计算 入门");
        assert_eq!(results.sources.len(), 5);
        assert_eq!(results.skipped, 0);
        let all = parse_fixture("zh_quantum_8_results.json", 20);
        assert_eq!(all.sources.len(), 8);
        assert_eq!(
            results.sources[..],
            all.sources[..5],
            "the top N in SearXNG's order"
        );
        // Result #8 has a thumbnail and is last despite its score: order is not re-sorted.
        assert!(all
            .sources
            .iter()
            .all(|s| s.url.starts_with("https://") || s.url.starts_with("http://")));
        assert_eq!(all.suggestions.len(), 3);
        assert!(
            all.sources.iter().any(|s| s.snippet.is_empty()),
            "result #5 has empty content"
        );
        assert!(all.sources.iter().filter(|s| s.published.is_some()).count() >= 3);
        assert!(all
            .sources
            .iter()
            .all(|s| s.title.chars().any(|c| !c.is_whitespace())));
    }

    #[test]
    fn english_fixture_with_merged_duplicates() {
        let results = parse_fixture("en_merged_duplicates_6_results.json", 20);
        assert_eq!(results.sources.len(), 6);
        let tokio = results
            .sources
            .iter()
            .find(|s| s.url.contains("docs.example.org/tokio/tutorial"))
            .unwrap();
        assert!(
            tokio.url.starts_with("https://"),
            "http was folded into https"
        );
        assert_eq!(tokio.engines.len(), 3);
        assert!(results
            .sources
            .iter()
            .any(|s| s.published.as_deref() == Some("2025-11-18T21:14:07.512934")));
    }

    #[test]
    fn empty_fixture_names_unresponsive_engines() {
        let results = parse_fixture("empty_unresponsive_engines.json", 5);
        assert!(results.sources.is_empty());
        assert!(!results.unresponsive_engines.is_empty());
        assert!(results
            .unresponsive_engines
            .iter()
            .any(|(_, reason)| reason.contains("CAPTCHA") || reason.contains("timeout")));
    }

    #[test]
    fn infobox_and_answer_objects() {
        let results = parse_fixture("infobox_and_answers.json", 5);
        assert_eq!(results.sources.len(), 4);
        assert_eq!(results.answers.len(), 2);
        assert!(results.answers.iter().all(|a| !a.is_empty()));
    }

    #[test]
    fn every_fixture_parses_without_skips() {
        for name in [
            "zh_quantum_8_results.json",
            "en_merged_duplicates_6_results.json",
            "empty_unresponsive_engines.json",
            "infobox_and_answers.json",
        ] {
            assert_eq!(parse_fixture(name, 20).skipped, 0, "{name}");
        }
    }

    #[test]
    fn lenient_parsing() {
        let body = br#"{
            "query": "q",
            "number_of_results": 0,
            "results": [
                {"url": "https://a.example/1", "title": "  spaced   title ", "content": null, "engines": ["x"], "score": 1.0, "publishedDate": null},
                {"url": null, "title": "no url"},
                {"url": "javascript:alert(1)", "title": "bad scheme"},
                {"title": "missing url"},
                "not an object",
                {"url": "https://b.example/2", "title": null, "content": "<b>bold</b> text", "engine": "brave", "extra": {"nested": true}}
            ],
            "answers": ["old style answer", {"answer": "new style", "url": null}, 42],
            "infoboxes": [{"infobox": "X", "positions": "", "score": 0}],
            "suggestions": ["s1", null],
            "unresponsive_engines": [["google", "CAPTCHA"], ["bad"], 7]
        }"#;
        let raw = interpret(StatusCode::OK, "application/json", "", body, "http://sx").unwrap();
        let results = normalise(raw, "q", 10, 200);
        assert_eq!(results.skipped, 4);
        assert_eq!(results.sources.len(), 2);
        assert_eq!(results.sources[0].title, "spaced title");
        assert_eq!(results.sources[0].snippet, "");
        assert_eq!(
            results.sources[1].title, "b.example",
            "a missing title falls back to the domain"
        );
        assert_eq!(
            results.sources[1].snippet, "<b>bold</b> text",
            "kept as text, never HTML"
        );
        assert_eq!(results.sources[1].engines, vec!["brave"]);
        assert_eq!(results.sources[1].domain, "b.example");
        assert_eq!(results.answers, vec!["old style answer", "new style"]);
        assert_eq!(results.suggestions, vec!["s1"]);
        assert_eq!(
            results.unresponsive_engines,
            vec![
                ("google".to_string(), "CAPTCHA".to_string()),
                ("bad".to_string(), String::new())
            ]
        );
    }

    #[test]
    fn snippets_are_cut_on_character_boundaries() {
        let body = format!(
            r#"{{"results": [{{"url": "https://a.example/", "title": "t", "content": "{}"}}]}}"#,
            "量子".repeat(300)
        );
        let raw = interpret(
            StatusCode::OK,
            "application/json",
            "",
            body.as_bytes(),
            "http://sx",
        )
        .unwrap();
        let results = normalise(raw, "q", 5, 200);
        assert_eq!(results.sources[0].snippet.chars().count(), 200);
        assert!(results.sources[0].snippet.ends_with('…'));
    }

    #[track_caller]
    fn check_error(status: u16, content_type: &str, body: &str, expect: &str) {
        let status = StatusCode::from_u16(status).unwrap();
        let error = interpret(
            status,
            content_type,
            "https://google.com/",
            body.as_bytes(),
            "http://sx/",
        )
        .unwrap_err();
        let shown = format!("{error:?}");
        assert!(shown.starts_with(expect), "{shown}");
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        check_error(
            403,
            "text/html",
            "<title>403 Forbidden</title>",
            "JsonDisabled",
        );
        check_error(429, "text/html", "Too Many Requests", "RateLimited");
        check_error(302, "text/html", "", "Redirect");
        check_error(308, "", "", "Redirect");
        check_error(
            400,
            "application/json",
            r#"{"error": "Invalid value zh_Hans for parameter language"}"#,
            "BadRequest",
        );
        check_error(
            500,
            "application/json",
            r#"{"error": "search error"}"#,
            "Status",
        );
        check_error(502, "text/html", "bad gateway", "Status");
        check_error(
            200,
            "text/html; charset=utf-8",
            "<!doctype html><html>",
            "NotJson",
        );
        check_error(
            200,
            "application/json",
            r#"{"results": [{"url": "https://a"#,
            "Malformed",
        );
        check_error(200, "application/json", "", "Malformed");
    }

    #[test]
    fn language_follows_the_query() {
        let (config, _) = Config::from_vars(|_| None);
        let searxng = Searxng::new(&config);
        let options = SearchOptions::default();
        assert_eq!(searxng.language_for("量子计算", &options), "zh-CN");
        assert_eq!(searxng.language_for("rust async", &options), "auto");
        let fixed = SearchOptions {
            language: Some("en".into()),
            ..SearchOptions::default()
        };
        assert_eq!(searxng.language_for("量子计算", &fixed), "en");
        assert!(has_han("mixed 中文"));
        assert!(!has_han("かな only ひらがな"));
    }

    #[test]
    fn endpoint_keeps_a_path_prefix() {
        let (config, _) = Config::from_vars(|name| {
            (name == "CITED_SEARXNG_URL").then(|| "https://h.example/searx/".to_string())
        });
        let searxng = Searxng::new(&config);
        assert_eq!(
            searxng.endpoint("search").as_str(),
            "https://h.example/searx/search"
        );
        let (config, _) = Config::from_vars(|_| None);
        assert_eq!(
            Searxng::new(&config).endpoint("healthz").as_str(),
            "http://localhost:8080/healthz"
        );
    }

    #[test]
    fn user_agent_passes_the_bot_filter() {
        for bot in [
            "curl",
            "wget",
            "python-requests",
            "Python",
            "Go-http-client",
            "Java",
            "okhttp",
            "HttpClient",
            "HeadlessChrome",
        ] {
            assert!(!USER_AGENT_VALUE.starts_with(bot));
        }
    }
}
