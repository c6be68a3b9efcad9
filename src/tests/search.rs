//! The SearXNG client against a real SearXNG (see `searxng.rs`) and, for faults a real one
//! cannot produce on demand, a small fake server.

use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::searxng;
use crate::ssr::config::Config;
use crate::ssr::search::searxng::Searxng;
use crate::ssr::search::{health, SearchError, SearchOptions, SearchProvider};

fn client(url: &str, extra: &[(&str, &str)]) -> Searxng {
    crate::ssr::net::install_crypto_provider();
    let (config, warnings) = Config::from_vars(|name| {
        if name == "CITED_SEARXNG_URL" {
            return Some(url.to_string());
        }
        extra
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    Searxng::new(&config)
}

fn science() -> SearchOptions {
    SearchOptions {
        categories: vec!["science".to_string()],
        ..SearchOptions::default()
    }
}

#[tokio::test]
async fn chinese_results_from_real_searxng() {
    let searxng = client(&searxng::shared().url, &[]);
    let results = searxng
        .search("量子计算 入门", &SearchOptions::default())
        .await
        .unwrap();
    assert_eq!(results.sources.len(), 3, "{results:?}");
    assert!(results
        .sources
        .iter()
        .all(|s| s.url.contains(".example.cn/")));
    assert!(results.sources.iter().any(|s| s.title == "量子计算 - 百科"));
    assert!(results.unresponsive_engines.is_empty());
}

#[tokio::test]
async fn english_results_are_merged_and_in_searxng_order() {
    let searxng = client(&searxng::shared().url, &[("CITED_SEARCH_RESULTS", "10")]);
    let results = searxng
        .search("rust async runtime", &SearchOptions::default())
        .await
        .unwrap();
    // 5 engine results, one pair merged by SearXNG (http and https of the same page).
    assert_eq!(results.sources.len(), 4, "{results:#?}");
    let tokio = &results.sources[0];
    assert_eq!(
        tokio.url, "https://docs.example.org/tokio/tutorial/",
        "found twice, so ranked first"
    );
    assert_eq!(tokio.engines, vec!["local a", "local b"]);
    assert_eq!(
        tokio.title, "Tokio tutorial: learn async Rust step by step",
        "the longest title wins"
    );
    // The top N setting is honoured.
    let top2 = client(&searxng::shared().url, &[("CITED_SEARCH_RESULTS", "2")])
        .search("rust async runtime", &SearchOptions::default())
        .await
        .unwrap();
    // Results with equal scores come in engine arrival order, which varies between
    // requests; the unique top result does not.
    assert_eq!(top2.sources.len(), 2);
    assert_eq!(top2.sources[0], results.sources[0]);
    assert!(top2
        .sources
        .iter()
        .all(|source| results.sources.contains(source)));
}

#[tokio::test]
async fn an_engine_timing_out_and_one_down_are_named() {
    let searxng = client(&searxng::shared().url, &[]);
    let results = searxng.search("papers", &science()).await.unwrap();
    assert_eq!(results.sources.len(), 1);
    let names: Vec<&str> = results
        .unresponsive_engines
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        names,
        vec!["local down", "local slow"],
        "{:?}",
        results.unresponsive_engines
    );
    let reasons: Vec<&str> = results
        .unresponsive_engines
        .iter()
        .map(|(_, reason)| reason.as_str())
        .collect();
    assert!(reasons[0].contains("HTTP connection error"), "{reasons:?}");
    assert!(reasons[1].contains("timeout"), "{reasons:?}");
}

#[tokio::test]
async fn zero_results_with_failed_engines_is_an_error_naming_them() {
    let searxng = client(&searxng::shared().url, &[]);
    let error = searxng
        .search("nothing at all", &science())
        .await
        .unwrap_err();
    let SearchError::EnginesFailed { unresponsive } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(unresponsive.len(), 2);
    assert!(
        crate::ssr::messages::search_error(crate::model::Lang::En, &error)
            .contains("local down, local slow")
    );
}

#[tokio::test]
async fn zero_results_from_healthy_engines_is_an_empty_answer() {
    let searxng = client(&searxng::shared().url, &[]);
    let results = searxng
        .search("nothing at all", &SearchOptions::default())
        .await
        .unwrap();
    assert!(results.sources.is_empty());
    assert!(results.unresponsive_engines.is_empty());
}

#[tokio::test]
async fn json_disabled_is_reported_with_its_fix() {
    let process = searxng::shared_json_disabled();
    let searxng = client(&process.url, &[]);
    let error = searxng
        .search("rust", &SearchOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, SearchError::JsonDisabled { .. }),
        "{error:?}"
    );
    assert!(
        crate::ssr::messages::search_error(crate::model::Lang::ZhCn, &error)
            .contains("search.formats")
    );
    let health = health::check(&searxng).await.unwrap_err();
    assert!(
        matches!(health, SearchError::JsonDisabled { .. }),
        "{health:?}"
    );
}

#[tokio::test]
async fn health_check_passes_on_a_good_instance() {
    let searxng = client(&searxng::shared().url, &[]);
    health::check(&searxng).await.unwrap();
}

#[tokio::test]
async fn nothing_listening_is_unreachable_with_the_start_command() {
    let port = searxng::free_port();
    let searxng = client(&format!("http://127.0.0.1:{port}"), &[]);
    let error = searxng
        .search("rust", &SearchOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, SearchError::Unreachable { .. }),
        "{error:?}"
    );
    let message = crate::ssr::messages::search_error(crate::model::Lang::En, &error);
    assert!(
        message.starts_with(&format!(
            "SearXNG is not running at http://127.0.0.1:{port}/"
        )),
        "{message}"
    );
    assert!(message.contains("docker compose -f searxng/docker-compose.yml up -d"));
    assert!(matches!(
        health::check(&searxng).await,
        Err(SearchError::Unreachable { .. })
    ));
}

/// Faults on demand: each path prefix is one misbehaving SearXNG.
async fn fake_searxng() -> String {
    let app = Router::new()
        .route(
            "/hang/search",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "never"
            }),
        )
        .route(
            "/slowbody/search",
            get(|| async {
                let stream = async_stream_body();
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    axum::body::Body::from_stream(stream),
                )
            }),
        )
        .route(
            "/limited/search",
            get(|| async { (StatusCode::TOO_MANY_REQUESTS, "Too Many Requests") }),
        )
        .route(
            "/broken/search",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"error": "search error"}"#,
                )
            }),
        )
        .route(
            "/html/search",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    "<!doctype html><html><body>SearXNG</body></html>",
                )
            }),
        )
        .route(
            "/truncated/search",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"query": "rust", "results": [{"url": "https://a.example/", "tit"#,
                )
            }),
        )
        .route(
            "/bang/search",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "https://www.google.com/search?q=rust")],
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A JSON body that starts at once and then stalls.
fn async_stream_body() -> impl futures_util::Stream<Item = Result<&'static str, std::io::Error>> {
    futures_util::stream::once(async { Ok::<_, std::io::Error>("{\"results\": [") }).chain(
        futures_util::stream::once(async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok("]}")
        }),
    )
}

use futures_util::StreamExt;

#[track_caller]
fn expect_error(
    result: Result<crate::ssr::search::SearchResults, SearchError>,
    variant: &str,
) -> SearchError {
    let error = result.unwrap_err();
    assert!(
        format!("{error:?}").starts_with(variant),
        "expected {variant}, got {error:?}"
    );
    error
}

#[tokio::test]
async fn faults_become_typed_errors() {
    let base = fake_searxng().await;
    let options = SearchOptions::default();
    let searxng = |path: &str| {
        client(
            &format!("{base}/{path}"),
            &[("CITED_SEARCH_TIMEOUT_SECS", "1")],
        )
    };
    let started = std::time::Instant::now();
    let error = expect_error(searxng("hang").search("rust", &options).await, "Timeout");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout covers the whole request"
    );
    assert!(error.is_timeout());
    let started = std::time::Instant::now();
    expect_error(
        searxng("slowbody").search("rust", &options).await,
        "Timeout",
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "a stalled body times out too"
    );
    let error = expect_error(
        searxng("limited").search("rust", &options).await,
        "RateLimited",
    );
    assert!(crate::ssr::messages::search_error(crate::model::Lang::En, &error).contains("limiter"));
    expect_error(searxng("broken").search("rust", &options).await, "Status");
    expect_error(searxng("html").search("rust", &options).await, "NotJson");
    expect_error(
        searxng("truncated").search("rust", &options).await,
        "Malformed",
    );
    let error = expect_error(
        searxng("bang").search("!!g rust", &options).await,
        "Redirect",
    );
    assert!(
        error
            .to_string()
            .contains("https://www.google.com/search?q=rust"),
        "never followed: {error}"
    );
}

#[tokio::test]
async fn repeated_queries_in_a_session_hit_the_cache() {
    use crate::ssr::pipeline::search::{cached_search, CacheUse};
    use crate::ssr::session::SessionStore;
    let store = SessionStore::new(Duration::from_secs(60));
    let alice = store.create(std::time::Instant::now());
    let bob = store.create(std::time::Instant::now());
    let searxng = client(&searxng::shared().url, &[]);
    let options = SearchOptions::default();
    let one_process = crate::ssr::shared::Shared::new(None, Duration::from_secs(600));
    let local = &one_process;
    let (first, use1) = cached_search(&alice, local, &searxng, "rust async", &options).await;
    let (second, use2) = cached_search(&alice, local, &searxng, "  Rust   ASYNC ", &options).await;
    assert_eq!((use1, use2), (CacheUse::Miss, CacheUse::Hit));
    assert_eq!(first.unwrap(), second.unwrap());
    let (_, other_session) = cached_search(&bob, local, &searxng, "rust async", &options).await;
    assert_eq!(
        other_session,
        CacheUse::Miss,
        "sessions never share a cache"
    );
    alice.reset();
    let (_, after_reset) = cached_search(&alice, local, &searxng, "rust async", &options).await;
    assert_eq!(after_reset, CacheUse::Miss, "/reset clears the cache");
    // Failures are not cached.
    let down = client(&format!("http://127.0.0.1:{}", searxng::free_port()), &[]);
    let (result, _) = cached_search(&bob, local, &down, "never cached", &options).await;
    assert!(result.is_err());
    let (_, again) = cached_search(&bob, local, &down, "never cached", &options).await;
    assert_eq!(again, CacheUse::Miss);
}
