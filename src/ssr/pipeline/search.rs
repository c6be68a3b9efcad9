//! How an answer searches: one [`Searcher`] per answer, used by the [`Turn`](super::Turn)
//! of every mode and by Research's branches alike. It holds the provider picked for the
//! answer (SearXNG or the knowledge base), the session's LRU cache and the cache every
//! instance shares, the conversation's files (searched alongside), and the narrowing the
//! user asked for (focus, period, site), applied to web searches only.

use std::sync::Arc;
use std::time::Duration;

use crate::model::{Image, Lang, Narrowing, Notice, Source};
use crate::ssr::config::FocusSearch;
use crate::ssr::files::ConversationFiles;
use crate::ssr::knowledge::Document;
use crate::ssr::search::cache::CacheKey;
use crate::ssr::search::{ProviderKind, SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::session::Session;
use crate::ssr::shared::Shared;
use crate::ssr::state::AppState;

/// Whether a search was answered from the session's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    Hit,
    Miss,
}

/// What one search gave, and whether the cache answered it.
pub type Searched = (Result<SearchResults, SearchError>, CacheUse);

/// The most pictures in the strip above an answer.
const MAX_IMAGES: usize = 6;
/// How long finding and fetching them may hold the answer up.
const IMAGES_DEADLINE: Duration = Duration::from_secs(4);

/// One answer's way to search. Cheap to clone: Research's branches each hold one.
#[derive(Clone)]
pub struct Searcher {
    state: AppState,
    session: Arc<Session>,
    provider: Arc<dyn SearchProvider>,
    files: Option<Arc<ConversationFiles>>,
    narrowing: Narrowing,
    focus: FocusSearch,
}

impl Searcher {
    /// Picks the answer's provider (the session's source choice; the health check may take
    /// a SearXNG timeout) and loads the conversation's files and `extra` ones. A fallback to
    /// the knowledge base comes with the notice that tells it.
    pub async fn pick(
        state: &AppState,
        session: Arc<Session>,
        lang: Lang,
        narrowing: Narrowing,
        extra: Vec<Document>,
    ) -> (Searcher, Option<Notice>) {
        let choice = session.settings().sources;
        let picked = state.pick_search(choice, lang).await;
        if picked.notice.is_some() {
            tracing::info!("SearXNG is unavailable; searching the knowledge base");
        }
        let files = load_files(state, &session, extra).await;
        let searcher = Searcher {
            focus: state.config.focus.get(narrowing.focus),
            state: state.clone(),
            session,
            provider: picked.provider,
            files,
            narrowing,
        };
        (searcher, picked.notice)
    }

    /// The text a knowledge-base or file citation (`url`) is checked against: its passage
    /// and the neighbouring ones, from the conversation's files or the knowledge base.
    pub fn passage_text(&self, url: &str) -> Option<String> {
        let (path, p) = crate::ssr::knowledge::knowledge_target(url)?;
        if path.starts_with(crate::ssr::files::FILES_PREFIX) {
            let document = self.files.as_ref()?.document(&path)?;
            return crate::ssr::knowledge::passage_context(document, p);
        }
        let document = self.state.knowledge.document(&path)?;
        crate::ssr::knowledge::passage_context(&document, p)
    }

    /// Where the results come from.
    pub fn kind(&self) -> ProviderKind {
        self.provider.kind()
    }

    /// What the user narrowed web searches to.
    pub fn narrowing(&self) -> &Narrowing {
        &self.narrowing
    }

    /// A search as the caller wrote it, through the caches (an encyclopedia check).
    pub async fn exact(&self, query: &str, options: &SearchOptions) -> Searched {
        cached_search(
            &self.session,
            &self.state.shared,
            self.provider.as_ref(),
            query,
            options,
        )
        .await
    }

    /// A web search narrowed as the user asked (see [`narrowed`]), through the caches; the
    /// knowledge base is searched as asked.
    pub async fn web(&self, query: &str, options: &SearchOptions) -> Searched {
        if self.kind() == ProviderKind::Knowledge {
            return self.exact(query, options).await;
        }
        let (query, options) = narrowed(&self.focus, &self.narrowing, query, options);
        self.exact(&query, &options).await
    }

    /// `searched` with the conversation's files' passages for `asked` added (never
    /// through a cache other sessions read). Files that find something make a failed web
    /// search a partial success.
    pub async fn with_files(
        &self,
        asked: &str,
        searched: Result<SearchResults, SearchError>,
    ) -> Result<SearchResults, SearchError> {
        let Some(files) = &self.files else {
            return searched;
        };
        let Ok(found) = files.search(asked, &SearchOptions::default()).await else {
            return searched;
        };
        match searched {
            Ok(mut results) => {
                results.sources.extend(found.sources);
                Ok(results)
            }
            Err(_) if !found.sources.is_empty() => Ok(SearchResults {
                partial: true,
                ..found
            }),
            Err(error) => Err(error),
        }
    }

    /// One search of an answer: [`Searcher::web`], then the conversation's files (not for
    /// pictures).
    pub async fn search(&self, query: &str, options: &SearchOptions) -> Searched {
        let (searched, cache) = self.web(query, options).await;
        if options.categories.iter().any(|c| c == "images") {
            return (searched, cache);
        }
        (self.with_files(query, searched).await, cache)
    }

    /// Pictures for the strip: SearXNG's images category for `query`, narrowed like the
    /// web searches. None from the knowledge base, with `CITED_IMAGES=off`, or when the
    /// search fails (the answer does not depend on them).
    pub async fn images(&self, query: &str) -> Vec<Image> {
        if !self.state.media.images || self.kind() != ProviderKind::Web {
            return Vec::new();
        }
        tokio::time::timeout(IMAGES_DEADLINE, self.find_images(query))
            .await
            .unwrap_or_default()
    }

    async fn find_images(&self, query: &str) -> Vec<Image> {
        let options = SearchOptions {
            categories: vec!["images".to_string()],
            max_results: Some(4 * MAX_IMAGES),
            ..SearchOptions::default()
        };
        let Ok(results) = self.search(query, &options).await.0 else {
            return Vec::new();
        };
        let mut candidates: Vec<Source> = Vec::new();
        for source in results.sources {
            if source.image.is_some() && candidates.iter().all(|c| c.url != source.url) {
                candidates.push(source);
            }
        }
        candidates.truncate(MAX_IMAGES + MAX_IMAGES / 2);
        // Fetched now (and kept), so the strip shows only pictures that load, at once.
        let media = &self.state.media;
        let loaded = futures_util::future::join_all(candidates.iter().map(|source| async {
            let src = source.image.as_deref().unwrap_or_default();
            media
                .get(crate::ssr::media::Kind::Image, src)
                .await
                .is_some()
        }))
        .await;
        let mut images: Vec<Image> = Vec::new();
        for (source, loaded) in candidates.into_iter().zip(loaded) {
            let path = match (&source.image, loaded) {
                (Some(src), true) => media.image_path(&self.state.store, src).await,
                _ => None,
            };
            if let Some(thumbnail) = path {
                images.push(Image {
                    page: source.url,
                    title: source.title,
                    domain: source.domain,
                    thumbnail,
                });
            }
            if images.len() == MAX_IMAGES {
                break;
            }
        }
        images
    }
}

/// The conversation's files and `extra` ones, indexed; `None` without any. The
/// conversation's own index is built once per set of files (`files::FileIndexes`).
async fn load_files(
    state: &AppState,
    session: &Session,
    extra: Vec<Document>,
) -> Option<Arc<ConversationFiles>> {
    let snippet_chars = state.config.snippet_chars;
    let conversation = session.conversation_id().filter(|_| session.kept);
    let Some(conversation) = conversation else {
        if extra.is_empty() {
            return None;
        }
        return crate::ssr::blocking::run(move || {
            Arc::new(ConversationFiles::new(extra, snippet_chars))
        })
        .await;
    };
    let owner = session.owner();
    let ids = match state.store.file_ids(&owner, &conversation).await {
        Ok(ids) => ids,
        Err(error) => {
            tracing::warn!(%error, "cannot read the conversation's files");
            Vec::new()
        }
    };
    if ids.is_empty() && extra.is_empty() {
        return None;
    }
    let reusable = extra.is_empty();
    if reusable {
        if let Some(index) = state.file_indexes.get(&conversation, &ids) {
            return Some(index);
        }
    }
    let mut documents = extra;
    if !ids.is_empty() {
        match state.store.files(&owner, &conversation).await {
            Ok(files) => documents.extend(files.into_iter().filter_map(|file| {
                let passages = serde_json::from_str(&file.passages).ok()?;
                Some(crate::ssr::files::document(
                    &conversation,
                    &file.id,
                    &file.name,
                    passages,
                ))
            })),
            Err(error) => tracing::warn!(%error, "cannot read the conversation's files"),
        }
    }
    if documents.is_empty() {
        return None;
    }
    let index = crate::ssr::blocking::run(move || {
        Arc::new(ConversationFiles::new(documents, snippet_chars))
    })
    .await?;
    if reusable {
        state
            .file_indexes
            .put(&conversation, ids, Arc::clone(&index));
    }
    Some(index)
}

/// Searches through the session's LRU cache, then (with `CITED_REDIS_URL`) the cache every
/// instance shares: an identical query (same options, same provider) is answered from
/// memory; only complete successful searches are remembered.
pub async fn cached_search(
    session: &Session,
    shared: &Shared,
    provider: &dyn SearchProvider,
    query: &str,
    options: &SearchOptions,
) -> (Result<SearchResults, SearchError>, CacheUse) {
    let key = CacheKey::new(query, options).from_source(provider.kind());
    let searches = &crate::ssr::metrics::metrics().searches;
    if let Some(results) = session.with_search_cache(|cache| cache.get(&key)) {
        tracing::debug!(session = ?session.id, query, n_results = results.sources.len(), "search cache hit");
        searches.with_label_values(&["hit"]).inc();
        return (Ok(results), CacheUse::Hit);
    }
    let shared_key = format!("{}:{key:?}", env!("CARGO_PKG_VERSION"));
    if let Some(results) = shared.cached_search(&shared_key).await {
        tracing::debug!(session = ?session.id, query, "shared search cache hit");
        session.with_search_cache(|cache| cache.put(key, results.clone()));
        searches.with_label_values(&["shared_hit"]).inc();
        // Told as a fresh search: whether somebody else searched it is not this user's to
        // learn.
        return (Ok(results), CacheUse::Miss);
    }
    tracing::debug!(session = ?session.id, query, "search cache miss");
    let result = provider.search(query, options).await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(error) => error.kind(),
    };
    searches.with_label_values(&[outcome]).inc();
    if let Ok(results) = &result {
        if !results.partial {
            session.with_search_cache(|cache| cache.put(key, results.clone()));
            shared.cache_search(&shared_key, results).await;
        }
    }
    (result, CacheUse::Miss)
}

/// A web search narrowed as the user asked: the focus's categories or engines (unless the
/// search names its own), the period (unless it has its own) and the site (`site:`
/// appended unless the query has one).
pub fn narrowed(
    focus: &crate::ssr::config::FocusSearch,
    narrowing: &crate::model::Narrowing,
    query: &str,
    options: &SearchOptions,
) -> (String, SearchOptions) {
    let mut options = options.clone();
    if options.categories.is_empty() && options.engines.is_empty() {
        options.categories = focus.categories.clone();
        options.engines = focus.engines.clone();
    }
    if options.time_range.is_none() {
        options.time_range = narrowing.period.map(Into::into);
    }
    let query = match &narrowing.site {
        Some(site) if !query.contains("site:") => format!("{query} site:{site}"),
        _ => query.to_string(),
    };
    (query, options)
}
