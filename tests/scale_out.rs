//! Two `cited serve` processes on different ports share PostgreSQL and Redis, as two
//! instances behind a load balancer would. One browser (one cookie jar) moves between
//! them: an answer asked on A is followed from B to the same text and stopped from B; a
//! search made on A is a cache hit on B; the ask rate limit counts both; and after `kill -9`
//! of A mid-answer, B shows the exchange interrupted.
//!
//! Needs the PostgreSQL (`CITED_TEST_DATABASE_URL`) and Redis (`CITED_TEST_REDIS_URL`) these
//! machines run; under `CI=true` their absence fails the test, elsewhere it is skipped.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]
#![allow(clippy::print_stderr, reason = "the test reports what it measured")]

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use cited::model::{AnswerEvent, Exchange, ExchangeState, LineDecoder};
use common::{free_port, post_json, scripted_model, serve, start_cited};
use futures_util::StreamExt;

/// A SearXNG in its JSON shape that counts the searches it answers.
async fn counting_searxng(searches: Arc<AtomicUsize>) -> String {
    async fn search(
        State(searches): State<Arc<AtomicUsize>>,
        Query(query): Query<std::collections::HashMap<String, String>>,
    ) -> impl IntoResponse {
        let q = query.get("q").cloned().unwrap_or_default();
        searches.fetch_add(1, Ordering::SeqCst);
        axum::Json(serde_json::json!({
            "query": q,
            "number_of_results": 2,
            "results": [
                {"url": "https://example.org/one", "title": "One", "content": "The first result.",
                 "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.0, "category": "general"},
                {"url": "https://example.org/two", "title": "Two", "content": "The second result.",
                 "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 0.5, "category": "general"}
            ],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
            "unresponsive_engines": []
        }))
    }
    let app = Router::new()
        .route("/search", get(search))
        .route("/healthz", get(|| async { "OK" }))
        .with_state(searches);
    serve(app).await
}

struct Services {
    database: String,
    redis: String,
}

/// The test PostgreSQL and Redis, or `None` (said) when they are not running outside CI.
/// Each test gets Redis database `db` of its own, emptied first: rate limits, caches and
/// slots of earlier runs (and of the other tests) are not there.
async fn services(db: u8) -> Option<Services> {
    let database = std::env::var("CITED_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let redis = std::env::var("CITED_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string());
    let redis = format!("{}/{db}", redis.trim_end_matches('/'));
    let store = cited::ssr::store::Store::open(&database).unwrap();
    let flushed = async {
        let client = redis::Client::open(redis.as_str())?;
        let mut connection = client.get_multiplexed_async_connection().await?;
        redis::cmd("FLUSHDB")
            .query_async::<()>(&mut connection)
            .await
    };
    let reachable = match (store.ready().await, flushed.await) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(error), _) => Err(format!("PostgreSQL at {database}: {error}")),
        (_, Err(error)) => Err(format!("Redis at {redis}: {error}")),
    };
    match reachable {
        Ok(()) => Some(Services { database, redis }),
        Err(error) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("required under CI: {error}")
        }
        Err(error) => {
            eprintln!("skipped, not reachable: {error}");
            None
        }
    }
}

/// Starts an instance on the shared services and waits until it answers `/healthz`.
async fn start(
    port: u16,
    services: &Services,
    model: &str,
    searxng: &str,
    extra: &[(&str, &str)],
) -> Child {
    let model = format!("{model}/v1");
    let mut vars = vec![
        ("CITED_DATABASE_URL", services.database.as_str()),
        ("CITED_REDIS_URL", services.redis.as_str()),
        ("CITED_LLM_BASE_URL", model.as_str()),
        ("CITED_LLM_MODEL", "scripted"),
        ("CITED_SEARXNG_URL", searxng),
        ("CITED_SOURCES", "web"),
        ("CITED_TITLES", "question"),
        ("CITED_RELATED", "off"),
        ("CITED_ALIGN_DEADLINE_SECS", "0"),
        ("CITED_RATE_ASKS_PER_MIN", "4"),
        ("CITED_LOG", "warn"),
    ];
    vars.extend(extra.iter().copied());
    start_cited(port, &vars, Stdio::inherit()).await
}

/// Presses stop on `port`; whether there was an answer to stop.
async fn stop(browser: &reqwest::Client, port: u16) -> bool {
    post_json(browser, port, "/api/stop").await
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap()
}

/// An answer's events as they arrive.
struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: LineDecoder,
    pending: std::collections::VecDeque<AnswerEvent>,
}

impl Events {
    fn of(response: reqwest::Response) -> Events {
        assert!(response.status().is_success(), "{}", response.status());
        Events {
            body: response.bytes_stream().boxed(),
            decoder: LineDecoder::default(),
            pending: Default::default(),
        }
    }

    async fn next(&mut self) -> Option<AnswerEvent> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("an event within 30 s")?
                .unwrap();
            self.pending.extend(self.decoder.push(&chunk));
        }
    }

    /// Reads until `n` rendering patches came (the browser's stream carries the text in
    /// them, and the whole text once, before `done`).
    async fn tokens(&mut self, n: usize) -> Vec<AnswerEvent> {
        let mut seen = Vec::new();
        while seen
            .iter()
            .filter(|e| matches!(e, AnswerEvent::Rendered { .. }))
            .count()
            < n
        {
            seen.push(self.next().await.expect("more tokens"));
        }
        seen
    }

    async fn rest(&mut self) -> Vec<AnswerEvent> {
        let mut seen = Vec::new();
        while let Some(event) = self.next().await {
            seen.push(event);
        }
        seen
    }
}

/// The events but the rendering patches.
fn unpatched(events: &[AnswerEvent]) -> Vec<&AnswerEvent> {
    events
        .iter()
        .filter(|e| !matches!(e, AnswerEvent::Rendered { .. }))
        .collect()
}

/// The blocks the rendering patches of a run of events add up to.
fn shown(events: &[AnswerEvent]) -> Vec<cited::model::blocks::Block> {
    let mut shown = cited::model::blocks::Shown::default();
    for event in events {
        if let AnswerEvent::Rendered { patch } = event {
            shown.apply(patch.clone());
        }
    }
    shown.blocks()
}

/// The answer text a run of events leaves on screen.
fn text(events: &[AnswerEvent]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            AnswerEvent::Token { text: piece } => text.push_str(piece),
            AnswerEvent::Rewrite { answer } => text.clone_from(answer),
            _ => {}
        }
    }
    text
}

async fn ask(browser: &reqwest::Client, port: u16, question: &str) -> reqwest::Response {
    browser
        .post(format!("http://127.0.0.1:{port}/api/ask"))
        .form(&[("question", question)])
        .send()
        .await
        .unwrap()
}

async fn conversation(browser: &reqwest::Client, port: u16) -> Vec<Exchange> {
    post_json(browser, port, "/api/conversation").await
}

#[tokio::test]
async fn two_instances_share_answers_stops_searches_limits_and_crashes() {
    cited::ssr::net::install_crypto_provider();
    let Some(services) = services(9).await else {
        return;
    };
    let model = scripted_model().await;
    let searches = Arc::new(AtomicUsize::new(0));
    let searxng = counting_searxng(Arc::clone(&searches)).await;
    let (a, b) = (free_port(), free_port());
    let mut instance_a = start(a, &services, &model, &searxng, &[]).await;
    let mut instance_b = start(b, &services, &model, &searxng, &[]).await;

    // Asked on A, followed from B mid-stream: the same text, to the end. (The cookie jar
    // ignores ports, so the same browser reaches both.)
    let follower = browser();
    let mut on_a = Events::of(ask(&follower, a, "what do two instances share?").await);
    let mut seen_on_a = on_a.tokens(5).await;
    let followed = follower
        .post(format!("http://127.0.0.1:{b}/api/follow"))
        .form(&[("from", "0"), ("running", "true")])
        .send()
        .await
        .unwrap();
    let on_b = Events::of(followed).rest().await;
    seen_on_a.extend(on_a.rest().await);
    assert!(
        matches!(on_b.first(), Some(AnswerEvent::Started { question, .. }) if question == "what do two instances share?"),
        "{:?}",
        on_b.first()
    );
    assert!(on_b
        .iter()
        .any(|e| matches!(e, AnswerEvent::Done { stopped: false, .. })));
    assert_eq!(text(&on_b), text(&seen_on_a));
    assert!(text(&on_b).starts_with("w0 w1 w2"), "{}", text(&on_b));
    // Replayed from an index: only what came after it.
    let replayed = follower
        .post(format!("http://127.0.0.1:{b}/api/follow"))
        .form(&[("from", "1")])
        .send()
        .await
        .unwrap();
    let replayed = Events::of(replayed).rest().await;
    // The events are the same; the rendering patches, coalesced by time, may be cut
    // differently but render the same answer.
    assert_eq!(unpatched(&replayed), unpatched(&on_b[1..]));
    assert_eq!(shown(&replayed), shown(&on_b[1..]));
    assert!(!shown(&replayed).is_empty());
    // B reads the finished exchange from the shared database.
    let stored = conversation(&follower, b).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].answer, text(&on_b));
    assert_eq!(stored[0].state, ExchangeState::Done);

    // Asked on A, stopped from B.
    let stopper = browser();
    let mut on_a = Events::of(ask(&stopper, a, "an endless answer, please").await);
    on_a.tokens(3).await;
    // B says busy: the browser's answer runs on A.
    let busy = ask(&stopper, b, "a second question meanwhile").await;
    assert_eq!(busy.status(), reqwest::StatusCode::CONFLICT);
    let asked_to_stop = Instant::now();
    assert!(stop(&stopper, b).await);
    let rest = on_a.rest().await;
    let took = asked_to_stop.elapsed();
    assert!(
        rest.iter()
            .any(|e| matches!(e, AnswerEvent::Done { stopped: true, .. })),
        "{rest:?}"
    );
    eprintln!("stopped from the other instance in {} ms", took.as_millis());

    // A search made on A is a cache hit on B, for another browser.
    let (first, second) = (browser(), browser());
    let before = searches.load(Ordering::SeqCst);
    let on_a = Events::of(ask(&first, a, "which results are cached?").await)
        .rest()
        .await;
    assert_eq!(searches.load(Ordering::SeqCst), before + 1);
    let on_b = Events::of(ask(&second, b, "which results are cached?").await)
        .rest()
        .await;
    assert_eq!(
        searches.load(Ordering::SeqCst),
        before + 1,
        "B answered from the shared cache"
    );
    let sources = |events: &[AnswerEvent]| {
        events
            .iter()
            .filter_map(|e| match e {
                AnswerEvent::Sources { sources } => {
                    Some(sources.iter().map(|s| s.url.clone()).collect::<Vec<_>>())
                }
                _ => None,
            })
            .next_back()
            .unwrap_or_default()
    };
    assert_eq!(
        sources(&on_b),
        vec!["https://example.org/one", "https://example.org/two"]
    );
    assert_eq!(sources(&on_a), sources(&on_b));
    let scrape = |port: u16| async move {
        reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let (metrics_a, metrics_b) = (scrape(a).await, scrape(b).await);
    // A searched SearXNG for each of its three questions; B only hit the shared cache.
    assert!(
        metrics_a.contains("cited_searches_total{outcome=\"ok\"} 3\n"),
        "{metrics_a}"
    );
    assert!(
        metrics_b.contains("cited_searches_total{outcome=\"shared_hit\"} 1\n"),
        "{metrics_b}"
    );
    assert!(
        !metrics_b.contains("cited_searches_total{outcome=\"ok\"}"),
        "{metrics_b}"
    );
    assert!(metrics_a.contains("cited_answers_total{mode=\"chat\",outcome=\"stopped\"} 1\n"));
    assert!(metrics_b.contains("cited_first_token_seconds_count{mode=\"chat\"} 1\n"));
    let ready = reqwest::get(format!("http://127.0.0.1:{b}/readyz"))
        .await
        .unwrap();
    let body = ready.text().await.unwrap();
    assert!(body.contains("redis: ok\n"), "{body}");

    // 4 questions a minute (burst 4) for one browser, counted across both instances.
    let asker = browser();
    for port in [a, b, a, b] {
        let response = ask(&asker, port, "a short one").await;
        assert!(response.status().is_success(), "{}", response.status());
        Events::of(response).rest().await;
    }
    let refused = ask(&asker, a, "a short one").await;
    assert_eq!(refused.status(), reqwest::StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));

    // `kill -9` of A mid-answer: B soon shows the exchange interrupted.
    let victim = browser();
    let mut on_a = Events::of(ask(&victim, a, "endless, until the crash").await);
    on_a.tokens(3).await;
    // B reads it while A still writes it: the question is there, being answered.
    let during = conversation(&victim, b).await;
    assert_eq!(during.len(), 1, "{during:?}");
    assert_eq!(during[0].state, ExchangeState::Answering);
    instance_a.kill().unwrap();
    instance_a.wait().unwrap();
    let killed = Instant::now();
    let mut last = Vec::new();
    while killed.elapsed() < Duration::from_secs(60) {
        last = conversation(&victim, b).await;
        if last
            .first()
            .is_some_and(|e| e.state == ExchangeState::Interrupted)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "B showed the answer interrupted {} s after A was killed",
        killed.elapsed().as_secs()
    );
    let _ = instance_b.kill();
    let _ = instance_b.wait();
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].question, "endless, until the crash");
    assert_eq!(last[0].state, ExchangeState::Interrupted);
}

/// `CITED_LOG_FORMAT=json`: one JSON object per log line, each request's carrying the id
/// its response names in `X-Request-Id`; `/readyz` says which dependency fails.
#[tokio::test]
async fn json_logs_carry_the_request_id_and_readiness_names_what_fails() {
    cited::ssr::net::install_crypto_provider();
    let port = free_port();
    let dead = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("serve")
        .env("CITED_ADDR", format!("127.0.0.1:{port}"))
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env("CITED_REDIS_URL", format!("redis://127.0.0.1:{dead}"))
        .env("CITED_SEARXNG_URL", format!("http://127.0.0.1:{dead}"))
        .env("CITED_LOG_FORMAT", "json")
        .env("CITED_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let ready = loop {
        if let Ok(response) = reqwest::get(format!("http://127.0.0.1:{port}/readyz")).await {
            break response;
        }
        assert!(Instant::now() < deadline, "cited did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id = ready.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(id.len(), 16, "{id}");
    assert_eq!(ready.status(), 503);
    let body = ready.text().await.unwrap();
    assert!(body.contains("database: ok\n"), "{body}");
    assert!(body.contains("redis: failing (unreachable)\n"), "{body}");
    assert!(body.contains("searxng: failing ("), "{body}");
    assert!(
        !body.contains("127.0.0.1"),
        "no address in a public answer: {body}"
    );
    assert!(
        body.contains("model: not used (offline answerer)\n"),
        "{body}"
    );
    // A proxy's plain request id is kept; anything else is replaced by a minted one.
    let client = reqwest::Client::new();
    let health = format!("http://127.0.0.1:{port}/healthz");
    let kept = client
        .get(&health)
        .header("x-request-id", "proxy-id_42")
        .send()
        .await
        .unwrap();
    assert_eq!(kept.headers()["x-request-id"], "proxy-id_42");
    let long = "x".repeat(100);
    let replaced = client
        .get(&health)
        .header("x-request-id", &long)
        .send()
        .await
        .unwrap();
    let minted = replaced.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(minted.len(), 16, "{minted}");
    // The page still renders: a failing Redis degrades to this process's own state.
    let page = reqwest::get(format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let logs = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<serde_json::Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    assert!(!lines.is_empty());
    assert!(
        lines.iter().any(
            |line| line["span"]["id"] == id.as_str() && line["fields"]["dependency"] == "redis"
        ),
        "{logs}"
    );
}

/// With Redis, `CITED_MAX_MODEL_CALLS` counts both instances' calls: they share the model.
/// One slot: B's answer waits while A's holds it, and goes on once A's is stopped.
#[tokio::test]
async fn model_calls_are_counted_across_instances() {
    cited::ssr::net::install_crypto_provider();
    let Some(services) = services(10).await else {
        return;
    };
    let model = scripted_model().await;
    let searxng = counting_searxng(Arc::new(AtomicUsize::new(0))).await;
    let (a, b) = (free_port(), free_port());
    let one = [("CITED_MAX_MODEL_CALLS", "1")];
    let mut instance_a = start(a, &services, &model, &searxng, &one).await;
    let mut instance_b = start(b, &services, &model, &searxng, &one).await;
    let (first, second) = (browser(), browser());
    let mut on_a = Events::of(ask(&first, a, "endless on A").await);
    on_a.tokens(2).await;
    let mut on_b = Events::of(ask(&second, b, "endless on B").await);
    let early = tokio::time::timeout(Duration::from_millis(1500), on_b.tokens(1)).await;
    assert!(early.is_err(), "B's model call waits for A's slot");
    // Either instance counts both calls: one running, one waiting.
    let metrics = reqwest::get(format!("http://127.0.0.1:{a}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("cited_shared_model_calls_running 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("cited_shared_model_calls_queued 1\n"),
        "{metrics}"
    );
    assert!(stop(&first, a).await);
    on_a.rest().await;
    on_b.tokens(2).await;
    assert!(stop(&second, b).await);
    on_b.rest().await;
    for instance in [&mut instance_a, &mut instance_b] {
        let _ = instance.kill();
        let _ = instance.wait();
    }
}
