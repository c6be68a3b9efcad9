//! Per-browser sessions, held on the server.
//!
//! The browser holds only a random 128-bit id in an HttpOnly, SameSite=Lax cookie; everything
//! else (mode, search switch, and later the citation registry, search cache and history) stays
//! here, so one session can never read another's state. Ids are always minted by the server:
//! an unknown or malformed id from a browser starts a fresh session (no session fixation).
//! Sessions idle longer than `CITED_SESSION_IDLE_MINS` are forgotten.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use crate::citation::Registry;
use crate::model::{Exchange, Settings};
use crate::ssr::search::cache::SearchCache;

/// The most sessions kept at once; past it the least recently used one is dropped, so a
/// flood of cookie-less requests cannot grow memory without bound.
const MAX_SESSIONS: usize = 10_000;

/// 128 random bits, shown as 32 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionId([u8; 16]);

impl SessionId {
    pub fn random() -> SessionId {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system provides randomness");
        SessionId(bytes)
    }

    pub fn parse(raw: &str) -> Option<SessionId> {
        if raw.len() != 32 || !raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let mut bytes = [0u8; 16];
        for (idx, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&raw[idx * 2..idx * 2 + 2], 16).ok()?;
        }
        Some(SessionId(bytes))
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for SessionId {
    /// Only a prefix: enough to tell sessions apart in logs, useless for hijacking one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02x}{:02x}…", self.0[0], self.0[1])
    }
}

/// One browser's state.
pub struct Session {
    pub id: SessionId,
    /// The signed-in user this browser belongs to (accounts or proxy sign-in); `None` when
    /// nobody signs in and the browser is its own anonymous user.
    pub user: Option<String>,
    /// Whether its answers are kept in the store: not for one-off questions nobody can come
    /// back to (an anonymous API call, `cited eval`).
    pub kept: bool,
    /// When the store last confirmed that this browser is still signed in.
    checked_at: Mutex<Instant>,
    last_seen: Mutex<Instant>,
    settings: Mutex<Settings>,
    /// Identical searches within the session are answered from here.
    search_cache: Mutex<SearchCache>,
    /// The conversation being continued (stored under this id), if any yet.
    conversation_id: Mutex<Option<String>>,
    /// Its questions and answers so far, oldest first (a cache of the store), and how many
    /// older ones were dropped from memory.
    conversation: Mutex<(Vec<Exchange>, u32)>,
    /// Agent and Research citation numbers: session-global, kept across questions and mode
    /// switches, cleared by `/reset` (seed 002).
    registry: Mutex<Registry>,
    /// The answer being written, if any (its id and stop token): one at a time per session.
    active: Mutex<Option<(u64, CancellationToken)>>,
    next_answer_id: AtomicU64,
    /// Bumped by every `/reset`, so an answer that started before it is not saved after it.
    generation: AtomicU64,
    /// Cited pages read to check citations, for the conversation they were read in:
    /// each page is read once per conversation (`None`: it could not be read).
    pages: Mutex<PageCache>,
    /// The model's verdicts on citations (`CITED_CHECK=model`) in that conversation, by
    /// source URL, sentence and source text length: a citation is judged once.
    verdicts: Mutex<VerdictCache>,
    /// The version of the browser's stored state this copy holds (`ssr::shared`: another
    /// instance that changes it bumps the version, and this copy is read again).
    version: AtomicU64,
}

/// The conversation whose pages these are, and each page by URL (`None`: unreadable).
type PageCache = (Option<String>, HashMap<String, Option<Arc<str>>>);

/// The conversation whose verdicts these are, and each verdict (`None`: no usable one).
type VerdictCache = (
    Option<String>,
    HashMap<(String, String, usize), Option<crate::ssr::align::judge::Verdict>>,
);

/// Most pages a session keeps for checking citations.
const MAX_PAGES: usize = 64;

/// Most exchanges kept per session; older ones are dropped (the model sees fewer anyway).
/// Opening or restoring a conversation reads no more than these from the store.
pub const MAX_EXCHANGES: usize = 200;

impl Session {
    pub fn new(id: SessionId, now: Instant) -> Session {
        Session {
            id,
            user: None,
            kept: true,
            checked_at: Mutex::new(now),
            last_seen: Mutex::new(now),
            settings: Mutex::new(Settings::default()),
            search_cache: Mutex::new(SearchCache::default()),
            conversation_id: Mutex::new(None),
            conversation: Mutex::new((Vec::new(), 0)),
            registry: Mutex::new(Registry::new()),
            active: Mutex::new(None),
            next_answer_id: AtomicU64::new(1),
            generation: AtomicU64::new(0),
            pages: Mutex::new((None, HashMap::new())),
            verdicts: Mutex::new((None, HashMap::new())),
            version: AtomicU64::new(0),
        }
    }

    /// The version of the stored state this copy holds.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Relaxed)
    }

    /// This copy holds the stored state at `version` (or newer).
    pub fn seen_version(&self, version: u64) {
        self.version.fetch_max(version, Ordering::Relaxed);
    }

    /// This copy made the change that raised the version to `version`: it is current only
    /// if no other change came between (else it stays older and is read again).
    pub fn made_version(&self, version: u64) {
        let _ = self.version.compare_exchange(
            version.saturating_sub(1),
            version,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Takes over the running answer of the copy this one replaces, so stopping either
    /// stops it and neither starts another meanwhile.
    pub fn adopt_answer(&self, older: &Session) {
        let active = lock(&older.active).clone();
        *lock(&self.active) = active;
        self.next_answer_id.fetch_max(
            older.next_answer_id.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
    }

    /// Whether the sign-in was confirmed longer than `every` ago.
    pub fn due_for_check(&self, every: Duration) -> bool {
        lock(&self.checked_at).elapsed() >= every
    }

    /// The store confirmed the sign-in just now.
    pub fn checked(&self) {
        *lock(&self.checked_at) = Instant::now();
    }

    /// The same session, its answers not kept.
    pub fn unkept(mut self) -> Session {
        self.kept = false;
        self
    }

    /// The same session, bound to `user`.
    pub fn with_user(mut self, user: Option<String>) -> Session {
        self.user = user;
        self
    }

    /// Whose conversations this session reads and writes: the signed-in user's (shared by
    /// all their browsers), else the browser's own.
    pub fn owner(&self) -> String {
        match &self.user {
            Some(user) => crate::ssr::store::owner_of_user(user),
            None => self.id.to_string(),
        }
    }

    /// A page read earlier in `conversation`: `Some(None)` when it could not be read.
    pub fn cached_page(&self, conversation: Option<&str>, url: &str) -> Option<Option<Arc<str>>> {
        let pages = lock(&self.pages);
        if pages.0.as_deref() != conversation {
            return None;
        }
        pages.1.get(url).cloned()
    }

    /// The model's verdict on a citation of `url` by `sentence` judged in `conversation`
    /// against a source text of `len` bytes (`Some(None)`: judged, no usable verdict).
    pub fn cached_verdict(
        &self,
        conversation: Option<&str>,
        key: &(String, String, usize),
    ) -> Option<Option<crate::ssr::align::judge::Verdict>> {
        let verdicts = lock(&self.verdicts);
        if verdicts.0.as_deref() != conversation {
            return None;
        }
        verdicts.1.get(key).cloned()
    }

    /// Keeps a verdict (forgetting another conversation's).
    pub fn cache_verdict(
        &self,
        conversation: Option<&str>,
        key: (String, String, usize),
        verdict: Option<crate::ssr::align::judge::Verdict>,
    ) {
        let mut verdicts = lock(&self.verdicts);
        if verdicts.0.as_deref() != conversation {
            *verdicts = (conversation.map(str::to_string), HashMap::new());
        }
        if verdicts.1.len() >= 4 * MAX_PAGES {
            verdicts.1.clear();
        }
        verdicts.1.insert(key, verdict);
    }

    /// Keeps a page read in `conversation` (forgetting another conversation's pages).
    pub fn cache_page(&self, conversation: Option<&str>, url: &str, text: Option<Arc<str>>) {
        let mut pages = lock(&self.pages);
        if pages.0.as_deref() != conversation {
            *pages = (conversation.map(str::to_string), HashMap::new());
        }
        if pages.1.len() >= MAX_PAGES {
            pages.1.clear();
        }
        pages.1.insert(url.to_string(), text);
    }

    pub fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    pub fn update_settings(&self, update: impl FnOnce(&mut Settings)) -> Settings {
        let mut settings = lock(&self.settings);
        update(&mut settings);
        settings.clone()
    }

    /// Runs `f` with the session's search cache locked. Never hold it across an `.await`.
    pub fn with_search_cache<T>(&self, f: impl FnOnce(&mut SearchCache) -> T) -> T {
        f(&mut lock(&self.search_cache))
    }

    /// `/reset` and "new chat": the next question starts a new conversation (the old one
    /// stays in the store), with fresh searches and citation numbers. Settings stay.
    pub fn reset(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        lock(&self.search_cache).clear();
        *lock(&self.conversation_id) = None;
        *lock(&self.conversation) = (Vec::new(), 0);
        lock(&self.registry).reset();
    }

    /// Continues a stored conversation: its id, exchanges and registry replace the
    /// current ones (like a `/reset` for answers still running). `earlier` exchanges of it
    /// came before `exchanges` and were not read.
    pub fn open_conversation(
        &self,
        id: String,
        exchanges: Vec<Exchange>,
        earlier: u32,
        registry: Registry,
    ) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        lock(&self.search_cache).clear();
        *lock(&self.conversation_id) = Some(id);
        // The conversation goes on with the model that last answered in it.
        if let Some(model) = exchanges.iter().rev().find_map(|e| e.model.clone()) {
            lock(&self.settings).model = Some(model);
        }
        // New answers get ids after the conversation's own, so an id names one answer of
        // the conversation however many sessions continued it.
        if let Some(last) = exchanges.iter().map(|e| e.id).max() {
            self.next_answer_id
                .fetch_max(last.saturating_add(1), Ordering::SeqCst);
        }
        let mut exchanges = exchanges;
        let excess = exchanges.len().saturating_sub(MAX_EXCHANGES);
        exchanges.drain(..excess);
        *lock(&self.conversation) = (
            exchanges,
            earlier.saturating_add(u32::try_from(excess).unwrap_or(u32::MAX)),
        );
        *lock(&self.registry) = registry;
    }

    /// The conversation being continued, if any.
    pub fn conversation_id(&self) -> Option<String> {
        lock(&self.conversation_id).clone()
    }

    /// Sets the conversation a new answer started, unless a `/reset` came since
    /// `generation`; returns whether it was set.
    pub fn start_conversation(&self, generation: u64, id: String) -> bool {
        let mut current = lock(&self.conversation_id);
        if self.generation() != generation {
            return false;
        }
        *current = Some(id);
        true
    }

    /// Runs `f` with the session's citation registry locked. Never hold it across an
    /// `.await`.
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> T {
        f(&mut lock(&self.registry))
    }

    /// Runs `f` with the registry locked, if the session is still in `generation` (no
    /// `/reset` since); `None` otherwise. Never hold it across an `.await`.
    pub fn with_registry_of<T>(
        &self,
        generation: u64,
        f: impl FnOnce(&mut Registry) -> T,
    ) -> Option<T> {
        // `reset` bumps the generation before it clears the registry, so a registration
        // that sees the old generation under the lock is cleared with the rest.
        let mut registry = lock(&self.registry);
        (self.generation() == generation).then(|| f(&mut registry))
    }

    /// Changes with every `/reset`.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub fn conversation(&self) -> Vec<Exchange> {
        lock(&self.conversation).0.clone()
    }

    /// Saves an exchange, unless the session was reset since `generation` was read.
    pub fn push_exchange(&self, generation: u64, exchange: Exchange) {
        let mut conversation = lock(&self.conversation);
        if self.generation() != generation {
            return;
        }
        let (exchanges, dropped) = &mut *conversation;
        exchanges.push(exchange);
        let excess = exchanges.len().saturating_sub(MAX_EXCHANGES);
        exchanges.drain(..excess);
        *dropped = dropped.saturating_add(u32::try_from(excess).unwrap_or(u32::MAX));
    }

    /// The position the next exchange of the conversation takes (0-based, counting any
    /// dropped from memory).
    pub fn next_seq(&self) -> u32 {
        let conversation = lock(&self.conversation);
        conversation
            .1
            .saturating_add(u32::try_from(conversation.0.len()).unwrap_or(u32::MAX))
    }

    /// Starts an answer: its id and the token that stops it. `None` while another answer
    /// of this session is still being written.
    pub fn begin_answer(&self) -> Option<(u64, CancellationToken)> {
        let mut active = lock(&self.active);
        if active
            .as_ref()
            .is_some_and(|(_, token)| !token.is_cancelled())
        {
            return None;
        }
        let token = CancellationToken::new();
        let id = self.next_answer_id.fetch_add(1, Ordering::Relaxed);
        *active = Some((id, token.clone()));
        Some((id, token))
    }

    /// Marks answer `id` finished, so the next one may start. A later answer that already
    /// took its place is left alone.
    pub fn end_answer(&self, id: u64) {
        let mut active = lock(&self.active);
        if active
            .as_ref()
            .is_some_and(|(active_id, _)| *active_id == id)
        {
            if let Some((_, token)) = active.take() {
                token.cancel();
            }
        }
    }

    /// The stop button: cancels the answer being written. False when there is none.
    pub fn stop_answer(&self) -> bool {
        match lock(&self.active).as_ref() {
            Some((_, token)) if !token.is_cancelled() => {
                token.cancel();
                true
            }
            _ => false,
        }
    }

    fn touch(&self, now: Instant) {
        *lock(&self.last_seen) = now;
    }

    fn idle_since(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*lock(&self.last_seen))
    }
}

/// A poisoned lock only means another request panicked mid-update of plain data; the data
/// is still usable, so recover it instead of failing every later request.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// All live sessions.
pub struct SessionStore {
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    idle: Duration,
}

impl SessionStore {
    pub fn new(idle: Duration) -> SessionStore {
        SessionStore {
            sessions: Mutex::new(HashMap::new()),
            idle,
        }
    }

    /// The session for a cookie value, if it exists and has not expired.
    pub fn get(&self, raw_id: &str, now: Instant) -> Option<Arc<Session>> {
        let id = SessionId::parse(raw_id)?;
        let mut sessions = lock(&self.sessions);
        let session = sessions.get(&id)?.clone();
        if session.idle_since(now) > self.idle {
            sessions.remove(&id);
            return None;
        }
        session.touch(now);
        Some(session)
    }

    /// A new session under a freshly minted id.
    pub fn create(&self, now: Instant) -> Arc<Session> {
        self.insert(Session::new(SessionId::random(), now))
    }

    /// Keeps `session` (one restored from the store, or new); past the size cap the least
    /// recently used one is dropped from memory (its browser's data stays in the store).
    pub fn insert(&self, session: Session) -> Arc<Session> {
        let session = Arc::new(session);
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        if sessions.len() >= MAX_SESSIONS {
            let oldest = sessions
                .values()
                .max_by_key(|session| session.idle_since(now))
                .map(|session| session.id);
            if let Some(oldest) = oldest {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(session.id, session.clone());
        session
    }

    /// Forgets one session (signed out); its running answer stops.
    pub fn remove(&self, id: &SessionId) {
        if let Some(session) = lock(&self.sessions).remove(id) {
            session.stop_answer();
        }
    }

    /// Forgets every session of `user` (signed out everywhere, removed, new password).
    pub fn remove_user(&self, user: &str) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, session| {
            let keep = session.user.as_deref() != Some(user);
            if !keep {
                session.stop_answer();
            }
            keep
        });
    }

    /// Forgets sessions idle for longer than the limit; returns how many were dropped.
    pub fn sweep(&self, now: Instant) -> usize {
        let mut sessions = lock(&self.sessions);
        let before = sessions.len();
        sessions.retain(|_, session| session.idle_since(now) <= self.idle);
        before - sessions.len()
    }

    pub fn len(&self) -> usize {
        lock(&self.sessions).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continued_conversation_numbers_new_answers_after_its_own() {
        // Another session (a restart, another device) continues a conversation of two
        // answers: the next answer is the third, never a second "1".
        let session = Session::new(SessionId::random(), Instant::now());
        let stored = |id| Exchange {
            id,
            ..Exchange::default()
        };
        session.open_conversation("c".into(), vec![stored(1), stored(2)], 0, Registry::new());
        let (id, _) = session.begin_answer().unwrap();
        assert_eq!(id, 3);
    }

    #[test]
    fn ids_round_trip_and_reject_junk() {
        let id = SessionId::random();
        let shown = id.to_string();
        assert_eq!(shown.len(), 32);
        assert_eq!(SessionId::parse(&shown), Some(id));
        for junk in [
            "",
            "abc",
            &shown.to_uppercase(),
            &format!("{shown}0"),
            &"g".repeat(32),
        ] {
            assert_eq!(SessionId::parse(junk), None, "{junk:?}");
        }
        assert_ne!(SessionId::random(), SessionId::random());
    }

    #[test]
    fn debug_output_hides_the_id() {
        let id = SessionId::random();
        assert!(!format!("{id:?}").contains(&id.to_string()));
    }

    #[test]
    fn sessions_expire_when_idle() {
        let store = SessionStore::new(Duration::from_secs(60));
        let start = Instant::now();
        let session = store.create(start);
        let raw = session.id.to_string();
        assert!(store.get(&raw, start + Duration::from_secs(30)).is_some());
        // Touched at 30 s, so still alive at 80 s.
        assert!(store.get(&raw, start + Duration::from_secs(80)).is_some());
        assert_eq!(store.sweep(start + Duration::from_secs(100)), 0);
        assert_eq!(store.sweep(start + Duration::from_secs(200)), 1);
        assert!(store.get(&raw, start + Duration::from_secs(200)).is_none());
        assert!(store.is_empty());
    }

    #[test]
    fn sessions_do_not_share_settings() {
        let store = SessionStore::new(Duration::from_secs(60));
        let now = Instant::now();
        let first = store.create(now);
        let second = store.create(now);
        first.update_settings(|settings| settings.search_enabled = false);
        assert!(!first.settings().search_enabled);
        assert!(second.settings().search_enabled);
    }
}
