//! Whole-app tests: the real server on 127.0.0.1:0, driven over HTTP with reqwest.

mod agent;
mod alignment;
mod attribution;
mod bounds;
mod chat;
mod checking;
mod doctor;
mod eval;
mod exports;
mod exposure;
mod fetch;
mod files;
mod knowledge;
mod layers;
mod llama;
mod llm;
mod mcp;
mod media;
pub mod model;
mod models;
mod openai_api;
mod real_model;
mod research;
mod robustness;
mod search;
mod searxng;
mod server;
mod store;

use std::net::SocketAddr;

use tokio::sync::oneshot;

use crate::model::AnswerEvent;
use crate::ssr::config::Config;
use crate::ssr::state::AppState;

/// The answer's `Done` event: the citation check's events may follow it.
pub fn done_event(events: &[AnswerEvent]) -> Option<&AnswerEvent> {
    events
        .iter()
        .rev()
        .find(|e| matches!(e, AnswerEvent::Done { .. }))
}

/// A checked configuration for pipeline tests: SearXNG at `searxng_url`, web search only
/// (these tests are about SearXNG: no fallback to the knowledge base), then `extra`, which
/// wins over both.
pub fn pipeline_config(searxng_url: &str, extra: &[(&str, &str)]) -> Config {
    crate::ssr::net::install_crypto_provider();
    let (config, warnings) = Config::from_vars(|name| {
        if let Some((_, value)) = extra.iter().find(|(key, _)| *key == name) {
            return Some(value.to_string());
        }
        match name {
            "CITED_SEARXNG_URL" => Some(searxng_url.to_string()),
            "CITED_SOURCES" => Some("web".to_string()),
            // Each test's state gets its own database, gone with it.
            "CITED_DATABASE_URL" => Some("sqlite::memory:".to_string()),
            // Scripted models answer only what a test asks; titles, the model's follow-up
            // questions and the image strip's search are tested on their own.
            "CITED_TITLES" => Some("question".to_string()),
            "CITED_RELATED" => Some("sources".to_string()),
            // The model's verdicts on citations are tested on their own (tests::checking).
            "CITED_CHECK" => Some("lexical".to_string()),
            "CITED_IMAGES" => Some("off".to_string()),
            // Thumbnails and favicons go to a folder of the test's own.
            "CITED_MEDIA_DIR" => Some(test_media_dir()),
            _ => None,
        }
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    config
}

/// A folder under the system's temporary one, its own for each call.
pub fn test_media_dir() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir()
        .join(format!(
            "cited-test-media-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
        .display()
        .to_string()
}

/// Runs one answer in a fresh session, collecting every event it sends (however many, as
/// they come, so the answer never waits on the channel).
pub async fn answer_collecting(
    state: &AppState,
    input: crate::ssr::pipeline::TurnInput,
) -> (crate::model::Exchange, Vec<crate::model::AnswerEvent>) {
    let session = crate::ssr::session::SessionStore::new(std::time::Duration::from_secs(600))
        .create(std::time::Instant::now());
    answer_in(state, session, input).await
}

/// Runs one answer in `session` (continuing its conversation), collecting every event.
pub async fn answer_in(
    state: &AppState,
    session: std::sync::Arc<crate::ssr::session::Session>,
    input: crate::ssr::pipeline::TurnInput,
) -> (crate::model::Exchange, Vec<crate::model::AnswerEvent>) {
    let (sender, mut receiver) = tokio::sync::mpsc::channel(4096);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = receiver.recv().await {
            events.push(event);
        }
        events
    });
    let cancel = tokio_util::sync::CancellationToken::new();
    let exchange = crate::ssr::answer::run(state.clone(), session, input, cancel, sender).await;
    (exchange, collector.await.unwrap())
}

/// A running server; dropping it shuts the server down.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The server's state (its store, sessions and limits), shared with it.
    pub state: AppState,
    _shutdown: oneshot::Sender<()>,
}

impl TestServer {
    pub async fn start(vars: &[(&str, &str)]) -> TestServer {
        crate::ssr::net::install_crypto_provider();
        let (config, warnings) = Config::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
                .or_else(|| match name {
                    "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
                    "CITED_TITLES" => Some("question".into()),
                    "CITED_RELATED" => Some("sources".into()),
                    "CITED_CHECK" => Some("lexical".into()),
                    "CITED_IMAGES" => Some("off".into()),
                    "CITED_MEDIA_DIR" => Some(test_media_dir()),
                    _ => None,
                })
        });
        assert!(warnings.is_empty(), "{warnings:?}");
        TestServer::start_with(AppState::new(config)).await
    }

    /// Serves `state` (a test's own model, database or limits).
    pub async fn start_with(state: AppState) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(crate::ssr::web::run(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            state,
            _shutdown: shutdown,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server-rendered HTML of `/` as this client's session sees it.
    pub async fn page(&self, client: &reqwest::Client) -> String {
        self.text(client, "/").await
    }

    /// A server function called as the page calls it (a form post): its JSON reply as `T`,
    /// after checking it answered 200.
    pub async fn call<T: serde::de::DeserializeOwned>(
        &self,
        client: &reqwest::Client,
        path: &str,
        form: &[(&str, &str)],
    ) -> T {
        let response = client.post(self.url(path)).form(form).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        response.json().await.unwrap()
    }

    /// The body of `GET path`, whatever its status.
    pub async fn text(&self, client: &reqwest::Client, path: &str) -> String {
        let response = client.get(self.url(path)).send().await.unwrap();
        if path == "/" {
            assert_eq!(response.status(), 200);
        }
        response.text().await.unwrap()
    }
}

/// A browser-like client with its own cookie jar.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}
