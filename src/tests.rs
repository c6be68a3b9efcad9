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
pub use crate::ssr::testing as model;
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

/// The app a test runs against, built in one place: cited's own defaults with an in-memory
/// database and none of the extra model calls a test did not ask for (titles and follow-up
/// questions by the model, its verdicts on citations, the image strip), then the test's
/// own variables, model, search provider and addresses fetching may reach.
#[derive(Default)]
pub struct App {
    vars: Vec<(String, String)>,
    model: Option<std::sync::Arc<dyn crate::ssr::llm::ChatModel>>,
    search: Option<std::sync::Arc<dyn crate::ssr::search::SearchProvider>>,
    allow: Vec<SocketAddr>,
}

impl App {
    pub fn new() -> App {
        App::default()
    }

    /// For pipeline tests: SearXNG at `url` and web search only (no fallback to the
    /// knowledge base: these tests are about SearXNG).
    pub fn searching(url: &str) -> App {
        App::new()
            .var("CITED_SEARXNG_URL", url)
            .var("CITED_SOURCES", "web")
    }

    /// Sets `name` (a later value wins).
    pub fn var(mut self, name: &str, value: &str) -> App {
        self.vars.retain(|(key, _)| key != name);
        self.vars.push((name.to_string(), value.to_string()));
        self
    }

    pub fn vars(self, vars: &[(&str, &str)]) -> App {
        vars.iter()
            .fold(self, |app, (name, value)| app.var(name, value))
    }

    pub fn model(mut self, model: std::sync::Arc<dyn crate::ssr::llm::ChatModel>) -> App {
        self.model = Some(model);
        self
    }

    pub fn search(mut self, search: std::sync::Arc<dyn crate::ssr::search::SearchProvider>) -> App {
        self.search = Some(search);
        self
    }

    /// Lets server-side fetching reach `addr` although it is private (a test's page server).
    pub fn allow(mut self, addr: SocketAddr) -> App {
        self.allow.push(addr);
        self
    }

    /// The checked configuration (no warnings: a test's typo fails it).
    pub fn config(&self) -> Config {
        crate::ssr::net::install_crypto_provider();
        let (config, warnings) = Config::from_vars(|name| {
            if let Some((_, value)) = self.vars.iter().find(|(key, _)| key == name) {
                return Some(value.clone());
            }
            match name {
                // Each test's state gets its own database, gone with it.
                "CITED_DATABASE_URL" => Some("sqlite::memory:".to_string()),
                // Scripted models answer only what a test asks; titles, the model's
                // follow-up questions and the image strip's search are tested on their own.
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

    pub fn state(self) -> AppState {
        let mut state = AppState::new(self.config());
        if let Some(model) = self.model {
            state.llm = model;
        }
        if let Some(search) = self.search {
            state.search = search;
        }
        if !self.allow.is_empty() {
            state.fetch = std::sync::Arc::new(crate::ssr::fetch::FetchPolicy {
                allow: self.allow.into_iter().collect(),
                ..crate::ssr::fetch::FetchPolicy::default()
            });
        }
        state
    }

    /// The state and a fresh session in it.
    pub fn with_session(self) -> (AppState, std::sync::Arc<crate::ssr::session::Session>) {
        (self.state(), session())
    }

    /// The real server on 127.0.0.1:0, serving this app.
    pub async fn serve(self) -> TestServer {
        TestServer::start_with(self.state()).await
    }
}

/// A fresh session, as a new browser gets.
pub fn session() -> std::sync::Arc<crate::ssr::session::Session> {
    crate::ssr::session::SessionStore::new(std::time::Duration::from_secs(600))
        .create(std::time::Instant::now())
}

/// A checked configuration for pipeline tests: SearXNG at `searxng_url`, web search only,
/// then `extra`, which wins over both.
pub fn pipeline_config(searxng_url: &str, extra: &[(&str, &str)]) -> Config {
    App::searching(searxng_url).vars(extra).config()
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
    answer_in(state, session(), input).await
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
        App::new().vars(vars).serve().await
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

    /// A server function called as the page calls it (a form post), its response whatever
    /// its status: for tests of refusals, headers and cookies.
    pub async fn send(
        &self,
        client: &reqwest::Client,
        path: &str,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        client.post(self.url(path)).form(form).send().await.unwrap()
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

/// A search provider whose every search finds this one source, in the process (no
/// SearXNG, no socket: a test on paused time can use it).
pub struct OnePage(pub crate::model::Source);

#[async_trait::async_trait]
impl crate::ssr::search::SearchProvider for OnePage {
    async fn search(
        &self,
        query: &str,
        _options: &crate::ssr::search::SearchOptions,
    ) -> Result<crate::ssr::search::SearchResults, crate::ssr::search::SearchError> {
        Ok(crate::ssr::search::SearchResults {
            query: query.to_string(),
            sources: vec![self.0.clone()],
            ..crate::ssr::search::SearchResults::default()
        })
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
