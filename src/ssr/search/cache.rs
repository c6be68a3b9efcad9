//! The per-session search cache (seed 003 搜索结果缓存): identical queries in a session are
//! answered from memory. LRU with 20 entries by default; only successful searches are kept.
//! It lives inside the session, so it is cleared on `/reset` and dies with the session.

use std::num::NonZeroUsize;

use lru::LruCache;

use crate::ssr::search::{ProviderKind, SearchOptions, SearchResults};

pub const DEFAULT_CAPACITY: NonZeroUsize = match NonZeroUsize::new(20) {
    Some(capacity) => capacity,
    None => unreachable!(),
};

/// The normalised query plus every option that changes the answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    query: String,
    options: SearchOptions,
    /// Which provider answered (`SearchProvider::name`): web and knowledge never mix.
    source: ProviderKind,
}

impl CacheKey {
    /// Case, surrounding and repeated whitespace do not make a query different.
    pub fn new(query: &str, options: &SearchOptions) -> CacheKey {
        CacheKey {
            query: query
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase(),
            options: options.clone(),
            source: ProviderKind::Web,
        }
    }

    pub fn from_source(mut self, source: ProviderKind) -> CacheKey {
        self.source = source;
        self
    }
}

pub struct SearchCache {
    entries: LruCache<CacheKey, SearchResults>,
}

impl Default for SearchCache {
    fn default() -> SearchCache {
        SearchCache::new(DEFAULT_CAPACITY)
    }
}

impl SearchCache {
    pub fn new(capacity: NonZeroUsize) -> SearchCache {
        SearchCache {
            entries: LruCache::new(capacity),
        }
    }

    pub fn get(&mut self, key: &CacheKey) -> Option<SearchResults> {
        self.entries.get(key).cloned()
    }

    pub fn put(&mut self, key: CacheKey, results: SearchResults) {
        self.entries.put(key, results);
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(tag: &str) -> SearchResults {
        SearchResults {
            query: tag.to_string(),
            ..SearchResults::default()
        }
    }

    #[test]
    fn normalised_queries_hit() {
        let mut cache = SearchCache::default();
        let options = SearchOptions::default();
        cache.put(CacheKey::new("Rust  async ", &options), results("a"));
        assert_eq!(
            cache.get(&CacheKey::new("rust async", &options)),
            Some(results("a"))
        );
        let english = SearchOptions {
            language: Some("en".into()),
            ..SearchOptions::default()
        };
        assert_eq!(
            cache.get(&CacheKey::new("rust async", &english)),
            None,
            "options are part of the key"
        );
    }

    #[test]
    fn least_recently_used_goes_first() {
        let mut cache = SearchCache::new(NonZeroUsize::new(2).unwrap());
        let options = SearchOptions::default();
        cache.put(CacheKey::new("a", &options), results("a"));
        cache.put(CacheKey::new("b", &options), results("b"));
        assert!(cache.get(&CacheKey::new("a", &options)).is_some());
        cache.put(CacheKey::new("c", &options), results("c"));
        assert!(
            cache.get(&CacheKey::new("b", &options)).is_none(),
            "b was least recently used"
        );
        assert!(cache.get(&CacheKey::new("a", &options)).is_some());
        assert_eq!(cache.len(), 2);
        cache.clear();
        assert!(cache.is_empty());
    }
}
