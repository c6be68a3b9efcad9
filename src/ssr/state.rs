//! `AppState`: what every request handler and server function can reach.

use std::sync::Arc;

use leptos::config::LeptosOptions;

use std::time::Duration;

use crate::model::Lang;
use crate::model::{Level, Notice, Sources};
use crate::ssr::config::Config;
use crate::ssr::fetch::FetchPolicy;
use crate::ssr::knowledge::KnowledgeBase;
use crate::ssr::limits::Limits;
use crate::ssr::llm::models::Models;
use crate::ssr::llm::openai::ClientOptions;
use crate::ssr::llm::ChatModel;
use crate::ssr::search::health::HealthMonitor;
use crate::ssr::search::searxng::Searxng;
use crate::ssr::search::Combined;
use crate::ssr::search::SearchProvider;
use crate::ssr::session::SessionStore;
use crate::ssr::store::Store;

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
    /// The models to pick from (`CITED_LLM_ENDPOINTS`); `llm` is their default.
    pub models: Arc<Models>,
    /// How Research deep-reads pages (SSRF guard, size and time limits).
    pub fetch: Arc<FetchPolicy>,
    /// The local knowledge base (`CITED_KNOWLEDGE_DIR`).
    pub knowledge: Arc<KnowledgeBase>,
    /// Where conversations last (`CITED_DATABASE_URL`).
    pub store: Arc<Store>,
    /// How much runs at once, and rate limits.
    pub limits: Arc<Limits>,
    /// Cancelled when the server shuts down: running answers stop and are saved.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Running answers, so shutdown can wait for them to be saved.
    pub answers: tokio_util::task::TaskTracker,
    /// What instances share (`CITED_REDIS_URL`), or this process's own equivalent.
    pub shared: Arc<crate::ssr::shared::Shared>,
    /// Each browser's latest answer: followed, replayed and stopped through it.
    pub log: Arc<crate::ssr::live::AnswerLog>,
    /// Thumbnails and favicons fetched through cited.
    pub media: Arc<crate::ssr::media::Media>,
    /// Where added files are parsed: in this process until `cited serve` (or `cited ask`)
    /// names a child process ([`AppState::isolate_files`]).
    pub extractor: Arc<crate::ssr::files::child::Extractor>,
    /// Conversations' file indexes, built once per set of files.
    pub file_indexes: Arc<crate::ssr::files::FileIndexes>,
}

/// The search provider an answer uses, and the notice that goes with it.
pub struct Picked {
    pub provider: Arc<dyn SearchProvider>,
    pub notice: Option<Notice>,
}

impl AppState {
    pub fn new(config: Config) -> AppState {
        let leptos_options = LeptosOptions::builder()
            .output_name(site_name(&config.site_root))
            .site_root(config.site_root.to_string_lossy().into_owned())
            .site_pkg_dir("pkg")
            .site_addr(config.addr)
            .build();
        let searxng = Searxng::new(&config);
        let knowledge = Arc::new(
            KnowledgeBase::open(config.knowledge.clone(), config.snippet_chars)
                .with_results(config.search_results),
        );
        let store = match Store::open(&config.database_url) {
            Ok(store) => store,
            Err(error) => {
                tracing::error!(%error, "cannot open the database; conversations are kept in memory only until cited stops");
                Store::open("sqlite::memory:").expect("an in-memory SQLite database always opens")
            }
        };
        let limits = Arc::new(Limits::new(&config.capacity));
        let shared = Arc::new(crate::ssr::shared::Shared::new(
            config.redis_url.as_ref(),
            config.search_cache,
        ));
        let models = Arc::new(Models::new(
            config.llm.as_ref(),
            ClientOptions {
                idle_timeout: config.limits.idle_timeout,
                structured: config.limits.structured,
                ..ClientOptions::default()
            },
            Arc::new(crate::ssr::shared::ModelCalls {
                shared: Arc::clone(&shared),
                local: Arc::clone(&limits.model_calls),
                capacity: config.capacity.model_calls,
            }),
        ));
        let llm = models.default_model();
        let fetch = FetchPolicy {
            readers: Some(Arc::clone(&limits.page_reads)),
            allow: config.media.allow.iter().copied().collect(),
            ..FetchPolicy::default()
        };
        AppState {
            media: Arc::new(crate::ssr::media::Media::new(&config.media)),
            log: Arc::new(crate::ssr::live::AnswerLog::new(Arc::clone(&shared))),
            shared,
            limits,
            shutdown: tokio_util::sync::CancellationToken::new(),
            answers: tokio_util::task::TaskTracker::new(),
            store: Arc::new(store),
            llm,
            models,
            knowledge,
            fetch: Arc::new(fetch),
            sessions: Arc::new(SessionStore::new(config.session_idle)),
            search: Arc::new(searxng.clone()),
            search_health: Arc::new(HealthMonitor::new(searxng)),
            config: Arc::new(config),
            leptos_options,
            extractor: Arc::new(crate::ssr::files::child::Extractor::InProcess),
            file_indexes: Arc::default(),
        }
    }

    /// Added files are parsed by this binary in a child process, within the configured
    /// memory and time (`ssr::files::child`).
    pub fn isolate_files(&mut self) {
        let capacity = &self.config.capacity;
        self.extractor = Arc::new(crate::ssr::files::child::Extractor::this_binary(
            crate::ssr::files::child::Sandbox {
                memory_bytes: capacity.file_memory_bytes,
                time: capacity.file_time,
                file_bytes: capacity.file_bytes,
            },
        ));
    }
}

impl AppState {
    /// Where an answer searches: the session's choice, else `CITED_SOURCES`. `Auto` uses
    /// SearXNG while it is healthy and the knowledge base (with a notice) when it is not.
    pub async fn pick_search(&self, choice: Option<Sources>, lang: Lang) -> Picked {
        let knowledge: Arc<dyn SearchProvider> = self.knowledge.clone();
        let web = Arc::clone(&self.search);
        match choice.unwrap_or(self.config.sources) {
            Sources::Web => Picked {
                provider: web,
                notice: None,
            },
            Sources::Knowledge => Picked {
                provider: knowledge,
                notice: None,
            },
            Sources::Both => Picked {
                provider: Arc::new(Combined { web, knowledge }),
                notice: None,
            },
            Sources::Auto => {
                let health = self.search_health.status(Duration::from_secs(30)).await;
                let why = match &health {
                    Ok(()) => None,
                    Err(error) => Some(crate::ssr::messages::search_error(lang, error)),
                };
                let Some(why) = why.filter(|_| !self.knowledge.is_empty()) else {
                    return Picked {
                        provider: web,
                        notice: None,
                    };
                };
                // Said with why, and the fix.
                let text = lang.texts().knowledge_fallback.replace("{reason}", &why);
                Picked {
                    provider: knowledge,
                    notice: Some(Notice {
                        level: Level::Info,
                        text,
                    }),
                }
            }
        }
    }
}

/// The built site's asset name (`cited.<hash>`), from the `pkg/NAME` file that
/// `scripts/seal-site.sh` writes; `cited` for an unsealed or missing site.
pub fn site_name(site_root: &std::path::Path) -> String {
    let sealed = std::fs::read_to_string(site_root.join("pkg").join("NAME")).ok();
    sealed
        .map(|name| name.trim().to_string())
        .filter(|name| {
            name.strip_prefix("cited.")
                .is_some_and(|hash| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .unwrap_or_else(|| "cited".to_string())
}
