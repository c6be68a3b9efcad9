//! `AppState`: what every request handler and server function can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use crate::ssr::config::Config;
use crate::ssr::fetch::FetchPolicy;
use crate::ssr::llm::extractive::Extractive;
use crate::ssr::llm::openai::{ClientOptions, OpenAiClient};
use crate::ssr::llm::ChatModel;
use crate::ssr::search::health::HealthMonitor;
use crate::ssr::search::searxng::Searxng;
use crate::ssr::search::SearchProvider;
use crate::ssr::session::SessionStore;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub sessions: Arc<SessionStore>,
    pub leptos_options: LeptosOptions,
    /// Web search (SearXNG).
    pub search: Arc<dyn SearchProvider>,
    pub search_health: Arc<HealthMonitor>,
    /// The configured model, or the offline extractive answerer when there is none.
    pub llm: Arc<dyn ChatModel>,
    /// How Research deep-reads pages (SSRF guard, size and time limits).
    pub fetch: Arc<FetchPolicy>,
}

impl AppState {
    pub fn new(config: Config) -> AppState {
        let leptos_options = LeptosOptions::builder()
            .output_name("cited")
            .site_root(config.site_root.to_string_lossy().into_owned())
            .site_pkg_dir("pkg")
            .site_addr(config.addr)
            .build();
        let searxng = Searxng::new(&config);
        let llm: Arc<dyn ChatModel> = match &config.llm {
            Some(llm) => Arc::new(OpenAiClient::new(llm, ClientOptions::default())),
            None => Arc::new(Extractive),
        };
        AppState {
            llm,
            fetch: Arc::new(FetchPolicy::default()),
            sessions: Arc::new(SessionStore::new(config.session_idle)),
            search: Arc::new(searxng.clone()),
            search_health: Arc::new(HealthMonitor::new(searxng)),
            config: Arc::new(config),
            leptos_options,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> LeptosOptions {
        state.leptos_options.clone()
    }
}
