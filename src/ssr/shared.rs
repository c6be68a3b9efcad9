//! What instances of cited share. With `CITED_REDIS_URL` (Valkey or Redis) any request can
//! land on any instance: the search cache, the rate limits, which browser has an answer
//! running, a mirror of each answer's log (`ssr::live`) and the stop signal live there.
//! Without it, the same API works within this one process (the embedded default), and
//! nothing of an answer's log is encoded or sent.
//!
//! Keys, all under `cited:`:
//! - `busy:<browser>`: the answer a browser is writing (its key), expiring unless its
//!   instance renews it, so an instance killed mid-answer frees the browser within 30 s;
//! - `latest:<browser>`: the browser's latest answer, for a tab that comes back to follow it;
//! - `events:<answer>`: a stream of the answer's events, entry `0-<index + 1>` holding event
//!   `index`, then an `end` entry; kept as long as the log keeps it after the answer ends;
//! - `answering:<conversation>:<seq>`: renewed while an exchange is being written, so the
//!   reaper can tell a running answer from one whose instance died;
//! - `search:<hash>`: a search's results, `CITED_SEARCH_CACHE_SECS`;
//! - `rate:<name>:<key>`: a GCRA's theoretical arrival time;
//! - `gate:{<name>}:{slots,queue,waiting,seq}`: a first-come, first-served semaphore across
//!   instances (model calls: the instances share the model), each slot and waiter expiring
//!   unless renewed;
//! - `browser:<browser>`: a counter bumped whenever a browser's stored state changes, so an
//!   instance holding an older copy in memory reads it again;
//! - the `cited:stop` channel: an answer's key, to stop it on whichever instance runs it.
//!
//! Browsers appear only as a hash of their session id. A failing Redis degrades to this
//! process's own state, logged, never to an error page.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use redis::aio::ConnectionManager;
use tokio_util::sync::CancellationToken;

use crate::model::AnswerEvent;
use crate::ssr::limits::Rate;
use crate::ssr::search::SearchResults;
use crate::ssr::store::Store;

/// How long a busy mark lives unless renewed, and how often it is renewed.
const BUSY_MS: u64 = 30_000;
pub const RENEW: Duration = Duration::from_secs(5);
/// How long a running exchange's mark lives unless renewed.
const ANSWERING_MS: u64 = 15_000;
/// How often the reaper looks for answers whose instance died, and how many looks in a
/// row must find one unmarked (an answer just begun is marked moments after it is stored).
const REAP_EVERY: Duration = Duration::from_secs(5);
const REAP_AFTER: u32 = 3;
/// How long a Redis connection may take to open, and a command on the request path to
/// answer, before this instance goes on without it; and how long it then leaves Redis alone.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
const CALL_TIMEOUT: Duration = Duration::from_millis(500);
const BREAK_FOR: Duration = Duration::from_secs(5);
/// Most answers this instance follows from other instances at once.
const MAX_FOLLOWERS: usize = 256;
const STOP_CHANNEL: &str = "cited:stop";

/// Events followed from another instance.
pub type Events = Pin<Box<dyn Stream<Item = AnswerEvent> + Send>>;

/// What the stop channel calls with an answer's key: stops it if this instance runs it.
pub type StopHere = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// An answer's events on their way to Redis, for other instances to follow.
pub struct Mirror<'a> {
    shared: &'a Shared,
    busy: String,
    key: String,
    stream: String,
    pipe: redis::Pipeline,
    added: bool,
    /// How long the stream outlives the answer (the log's own retention).
    keep_secs: u64,
}

impl Mirror<'_> {
    /// Adds event `index` to the next [`Mirror::flush`].
    pub fn add(&mut self, index: usize, event: &AnswerEvent) {
        let line = serde_json::to_string(event).unwrap_or_default();
        self.pipe
            .cmd("XADD")
            .arg(&self.stream)
            .arg(format!("0-{}", index + 1))
            .arg("e")
            .arg(line)
            .ignore();
        self.added = true;
    }

    /// Sends what was added; false once mirroring failed (the answer goes on here only).
    pub async fn flush(&mut self) -> bool {
        if !std::mem::take(&mut self.added) {
            return true;
        }
        let mut pipe = std::mem::replace(&mut self.pipe, redis::pipe());
        pipe.cmd("EXPIRE")
            .arg(&self.stream)
            .arg(self.keep_secs + 3600)
            .ignore();
        let Some(mut connection) = self.shared.connection() else {
            return true;
        };
        let sent = self
            .shared
            .call("events", pipe.query_async::<()>(&mut connection))
            .await;
        if sent.is_none() {
            tracing::warn!("other instances cannot follow this answer");
        }
        sent.is_some()
    }

    /// Renews the browser's busy mark: taken again if it was lost (a restarted Valkey),
    /// never from another answer.
    pub async fn renew(&self) {
        let Some(mut connection) = self.shared.connection() else {
            return;
        };
        let renewed = redis::Script::new(
            "local held = redis.call('GET', KEYS[1]) if held == false or held == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0",
        );
        let _ = self
            .shared
            .call(
                "renew",
                renewed
                    .key(&self.busy)
                    .arg(&self.key)
                    .arg(BUSY_MS)
                    .invoke_async::<i64>(&mut connection),
            )
            .await;
    }
}

pub struct Shared {
    redis: Option<Redis>,
    search_ttl: Duration,
    /// After a failure Redis is left alone until then: requests go on with this process's
    /// own state instead of each waiting for a timeout.
    down_until: Mutex<Option<std::time::Instant>>,
    /// Followers of answers written elsewhere (each holds a connection of its own).
    followers: Arc<tokio::sync::Semaphore>,
    /// Cancelled when the server shuts down: followers end.
    closing: CancellationToken,
}

struct Redis {
    client: redis::Client,
    connection: ConnectionManager,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fresh random key (an answer's, a slot ticket's).
pub fn random_key() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What Redis knows a browser by: a hash of its session id, never the id itself.
pub fn browser_key(session_id: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(session_id.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Keeps an exchange marked as being written while it lives.
pub struct Alive(Option<tokio::task::JoinHandle<()>>);

impl Drop for Alive {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// One answer followed from Redis.
struct Follower {
    connection: redis::aio::MultiplexedConnection,
    stream: String,
    /// The writer's busy mark, and the answer's key it holds while the answer runs.
    busy: String,
    key: String,
    last: String,
    pending: std::collections::VecDeque<AnswerEvent>,
    ended: bool,
    /// Empty reads in a row (2 s each).
    quiet: u32,
    closing: CancellationToken,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Follower {
    async fn next(&mut self) -> Option<AnswerEvent> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            if self.ended || self.quiet > 300 {
                return None;
            }
            let mut command = redis::cmd("XREAD");
            command
                .arg("COUNT")
                .arg(512)
                .arg("BLOCK")
                .arg(2000)
                .arg("STREAMS")
                .arg(&self.stream)
                .arg(&self.last);
            let read = command
                .query_async::<Option<redis::streams::StreamReadReply>>(&mut self.connection);
            let reply = tokio::select! {
                () = self.closing.cancelled() => return None,
                reply = read => reply,
            };
            let entries = match reply {
                Ok(reply) => reply
                    .map(|reply| reply.keys.into_iter().flat_map(|key| key.ids))
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>(),
                Err(error) => {
                    tracing::warn!(%error, "following an answer from Redis failed");
                    return None;
                }
            };
            if entries.is_empty() {
                self.quiet += 1;
                // Nothing new: is anyone still writing it?
                let holder = redis::cmd("GET")
                    .arg(&self.busy)
                    .query_async::<Option<String>>(&mut self.connection)
                    .await;
                if let Ok(holder) = holder {
                    self.ended = holder.as_deref() != Some(self.key.as_str());
                }
                continue;
            }
            self.quiet = 0;
            for entry in entries {
                self.last.clone_from(&entry.id);
                if entry.map.contains_key("end") {
                    self.ended = true;
                    break;
                }
                if let Some(event) = entry
                    .get::<String>("e")
                    .and_then(|line| serde_json::from_str(&line).ok())
                {
                    self.pending.push_back(event);
                }
            }
        }
    }
}

impl Shared {
    /// Connects lazily: nothing is sent to Redis before the first command.
    pub fn new(url: Option<&url::Url>, search_ttl: Duration) -> Shared {
        let redis = url.and_then(|url| {
            let opened = redis::Client::open(url.as_str()).and_then(|client| {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(COMMAND_TIMEOUT))
                    .set_response_timeout(Some(COMMAND_TIMEOUT))
                    .set_number_of_retries(2);
                let connection = client.get_connection_manager_lazy(config)?;
                Ok(Redis { client, connection })
            });
            match opened {
                Ok(redis) => Some(redis),
                Err(error) => {
                    tracing::error!(%error, "cannot use CITED_REDIS_URL; this instance shares nothing");
                    None
                }
            }
        });
        Shared {
            redis,
            search_ttl,
            down_until: Mutex::new(None),
            followers: Arc::new(tokio::sync::Semaphore::new(MAX_FOLLOWERS)),
            closing: CancellationToken::new(),
        }
    }

    /// Whether instances share state through Redis.
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// The connection, unless there is no Redis or it failed moments ago.
    fn connection(&self) -> Option<ConnectionManager> {
        let redis = self.redis.as_ref()?;
        let mut down = lock(&self.down_until);
        match *down {
            Some(until) if std::time::Instant::now() < until => return None,
            Some(_) => *down = None,
            None => {}
        }
        Some(redis.connection.clone())
    }

    /// Awaits one Redis call within `CALL_TIMEOUT`; a failure is logged, leaves Redis alone
    /// for a few seconds, and is `None`.
    async fn call<T>(
        &self,
        what: &str,
        call: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Option<T> {
        let error = match tokio::time::timeout(CALL_TIMEOUT, call).await {
            Ok(Ok(value)) => return Some(value),
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {} ms", CALL_TIMEOUT.as_millis()),
        };
        let mut down = lock(&self.down_until);
        if down.is_none() {
            tracing::warn!(%error, what, "Redis failed; going on with this instance's own state for {} s", BREAK_FOR.as_secs());
        }
        *down = Some(std::time::Instant::now() + BREAK_FOR);
        None
    }

    /// Runs one command through [`Shared::call`].
    async fn run<T: redis::FromRedisValue>(&self, what: &str, command: &redis::Cmd) -> Option<T> {
        let mut connection = self.connection()?;
        self.call(what, command.query_async::<T>(&mut connection))
            .await
    }

    /// `Ok` when Redis answers (or none is configured), else why not: a real `PING` within
    /// `CALL_TIMEOUT`, past the breaker that spares answers a Redis that just failed.
    pub async fn ping(&self) -> Result<(), String> {
        let Some(redis) = self.redis.as_ref() else {
            return Ok(());
        };
        let mut connection = redis.connection.clone();
        let command = redis::cmd("PING");
        let ping = command.query_async::<String>(&mut connection);
        match tokio::time::timeout(CALL_TIMEOUT, ping).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {} ms", CALL_TIMEOUT.as_millis())),
        }
    }

    /// Starts listening for stop signals and, with Redis, the reaper of answers whose
    /// instance died. Call once, on the runtime.
    pub fn start(
        self: &Arc<Shared>,
        store: Arc<Store>,
        shutdown: CancellationToken,
        stop_here: StopHere,
    ) {
        if self.redis.is_none() {
            return;
        }
        let closing = self.closing.clone();
        let closed = shutdown.clone();
        tokio::spawn(async move {
            closed.cancelled().await;
            closing.cancel();
        });
        tokio::spawn(Arc::clone(self).listen_for_stops(shutdown.clone(), stop_here));
        tokio::spawn(Arc::clone(self).reap(store, shutdown));
    }

    async fn listen_for_stops(self: Arc<Shared>, shutdown: CancellationToken, stop_here: StopHere) {
        let Some(redis) = &self.redis else { return };
        let mut pause = Duration::from_secs(1);
        while !shutdown.is_cancelled() {
            let subscribed = async {
                let mut pubsub = redis.client.get_async_pubsub().await?;
                pubsub.subscribe(STOP_CHANNEL).await?;
                Ok::<_, redis::RedisError>(pubsub)
            };
            match subscribed.await {
                Ok(pubsub) => {
                    pause = Duration::from_secs(1);
                    let mut messages = pubsub.into_on_message();
                    loop {
                        let message = tokio::select! {
                            () = shutdown.cancelled() => return,
                            message = messages.next() => message,
                        };
                        let Some(message) = message else { break };
                        if let Ok(key) = message.get_payload::<String>() {
                            stop_here(&key);
                        }
                    }
                    tracing::warn!("the Redis stop channel closed; subscribing again");
                }
                Err(error) => tracing::warn!(%error, "cannot subscribe to stop signals"),
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(Duration::from_secs(30));
        }
    }

    /// Marks the browser busy with the answer `key`; false when another answer holds the
    /// mark (on another instance). Always true without Redis (or while it is down).
    pub async fn claim(&self, browser: &str, key: &str, keep: Duration) -> bool {
        if self.redis.is_none() {
            return true;
        }
        let claimed: Option<Option<String>> = self
            .run(
                "claim",
                redis::cmd("SET")
                    .arg(format!("cited:busy:{browser}"))
                    .arg(key)
                    .arg("NX")
                    .arg("PX")
                    .arg(BUSY_MS),
            )
            .await;
        if matches!(claimed, Some(None)) {
            return false;
        }
        let _: Option<()> = self
            .run(
                "latest",
                redis::cmd("SET")
                    .arg(format!("cited:latest:{browser}"))
                    .arg(key)
                    .arg("EX")
                    .arg(keep.as_secs() + 3600),
            )
            .await;
        true
    }

    /// Where an answer's events are mirrored for other instances; `None` without Redis
    /// (nothing is encoded for a stream nobody reads).
    pub fn mirror<'a>(&'a self, browser: &str, key: &str, keep: Duration) -> Option<Mirror<'a>> {
        self.redis.as_ref()?;
        Some(Mirror {
            shared: self,
            busy: format!("cited:busy:{browser}"),
            key: key.to_string(),
            stream: format!("cited:events:{key}"),
            pipe: redis::pipe(),
            added: false,
            keep_secs: keep.as_secs(),
        })
    }

    /// Says the answer `key` ended: an `end` entry in its stream, and the browser's busy
    /// mark freed (unless, after an outage, another answer holds it).
    pub async fn ended(&self, browser: &str, key: &str, keep: Duration) {
        let Some(mut connection) = self.connection() else {
            return;
        };
        let stream = format!("cited:events:{key}");
        let mut pipe = redis::pipe();
        pipe.cmd("XADD")
            .arg(&stream)
            .arg("*")
            .arg("end")
            .arg(1)
            .ignore();
        pipe.cmd("EXPIRE").arg(&stream).arg(keep.as_secs()).ignore();
        if let Err(error) = pipe.query_async::<()>(&mut connection).await {
            tracing::warn!(%error, "cannot end the answer's events in Redis");
        }
        let release = redis::Script::new(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        );
        if let Err(error) = release
            .key(format!("cited:busy:{browser}"))
            .arg(key)
            .invoke_async::<i64>(&mut connection)
            .await
        {
            tracing::warn!(%error, "cannot free the browser's busy mark; it expires by itself");
        }
    }

    /// The key of the browser's running answer (`running`), or of its latest one, on any
    /// instance.
    pub async fn latest_key(&self, browser: &str, running: bool) -> Option<String> {
        // A running answer holds the busy mark; the latest one may have ended.
        let mark = if running { "busy" } else { "latest" };
        self.run(
            "latest",
            redis::cmd("GET").arg(format!("cited:{mark}:{browser}")),
        )
        .await
        .flatten()
    }

    /// Follows an answer another instance writes, from its stream in Redis, on a
    /// connection of its own (blocking reads would hold up everyone else's commands). It
    /// ends at the answer's `end` entry, when the writer's busy mark is gone with no more
    /// events (the writer died: the reaper marks the exchange interrupted), at shutdown, or
    /// after ten quiet minutes.
    pub async fn follow_elsewhere(
        &self,
        browser: &str,
        key: String,
        from: usize,
    ) -> Option<Events> {
        let redis = self.redis.as_ref()?;
        let Ok(permit) = Arc::clone(&self.followers).try_acquire_owned() else {
            tracing::warn!("too many answers followed from other instances; this one is not");
            return None;
        };
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(COMMAND_TIMEOUT))
            .set_response_timeout(None);
        let connection = match redis
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
        {
            Ok(connection) => connection,
            Err(error) => {
                tracing::warn!(%error, "cannot follow an answer from Redis");
                return None;
            }
        };
        let follower = Follower {
            connection,
            stream: format!("cited:events:{key}"),
            busy: format!("cited:busy:{browser}"),
            key,
            last: format!("0-{from}"),
            pending: std::collections::VecDeque::new(),
            ended: false,
            quiet: 0,
            closing: self.closing.clone(),
            _permit: permit,
        };
        Some(Box::pin(futures_util::stream::unfold(
            follower,
            |mut follower| async move {
                let event = follower.next().await?;
                Some((event, follower))
            },
        )))
    }

    /// Asks whichever instance runs the browser's answer to stop it; false when none
    /// runs anywhere (or there is no Redis).
    pub async fn signal_stop(&self, browser: &str) -> bool {
        let key: Option<String> = self
            .run(
                "busy",
                redis::cmd("GET").arg(format!("cited:busy:{browser}")),
            )
            .await
            .flatten();
        let Some(key) = key else { return false };
        let _: Option<i64> = self
            .run("stop", redis::cmd("PUBLISH").arg(STOP_CHANNEL).arg(&key))
            .await;
        true
    }

    /// A search cached by any instance (`key`: what identifies the query, its options and
    /// provider).
    pub async fn cached_search(&self, key: &str) -> Option<SearchResults> {
        self.redis.as_ref()?;
        let found: Option<String> = self
            .run(
                "search cache",
                redis::cmd("GET").arg(format!("cited:search:{}", hashed(key))),
            )
            .await
            .flatten();
        serde_json::from_str(&found?).ok()
    }

    pub async fn cache_search(&self, key: &str, results: &SearchResults) {
        if self.redis.is_none() || self.search_ttl.is_zero() {
            return;
        }
        let Ok(json) = serde_json::to_string(results) else {
            return;
        };
        let _: Option<()> = self
            .run(
                "search cache",
                redis::cmd("SET")
                    .arg(format!("cited:search:{}", hashed(key)))
                    .arg(json)
                    .arg("EX")
                    .arg(self.search_ttl.as_secs().max(1)),
            )
            .await;
    }

    /// Checks a rate limit for `key`: across instances with Redis (a GCRA with the same
    /// rate and burst), else (or when Redis fails) in this process.
    pub async fn check_rate<K>(&self, rate: &Rate<K>, key: &K, shown: &str) -> Result<(), Duration>
    where
        K: std::hash::Hash + Eq + Clone,
    {
        if self.redis.is_none() {
            return rate.check(key);
        }
        let interval = 60_000.0 / f64::from(rate.per_minute.max(1));
        let tolerance = interval * f64::from(rate.burst.saturating_sub(1));
        let script = redis::Script::new(GCRA);
        let Some(mut connection) = self.connection() else {
            return rate.check(key);
        };
        let mut invocation = script.key(format!("cited:rate:{}:{}", rate.name, hashed(shown)));
        invocation.arg(interval).arg(tolerance);
        let waited = invocation.invoke_async::<i64>(&mut connection);
        match self.call("rate limit", waited).await {
            Some(0) => Ok(()),
            Some(ms) => Err(Duration::from_millis(ms.unsigned_abs())),
            // This instance counts the limit alone meanwhile.
            None => rate.check(key),
        }
    }

    /// The version of a browser's stored state other instances last wrote, when shared.
    pub async fn browser_version(&self, session_id: &str) -> Option<u64> {
        self.redis.as_ref()?;
        let version: Option<u64> = self
            .run(
                "browser version",
                redis::cmd("GET").arg(format!("cited:browser:{}", browser_key(session_id))),
            )
            .await
            .flatten();
        Some(version.unwrap_or(0))
    }

    /// Says a browser's stored state changed; the new version, when shared.
    pub async fn browser_changed(&self, session_id: &str) -> Option<u64> {
        self.redis.as_ref()?;
        let key = format!("cited:browser:{}", browser_key(session_id));
        let mut pipe = redis::pipe();
        pipe.cmd("INCR").arg(&key);
        pipe.cmd("EXPIRE").arg(&key).arg(30 * 86_400).ignore();
        let mut connection = self.connection()?;
        self.call(
            "browser version",
            pipe.query_async::<(u64,)>(&mut connection),
        )
        .await
        .map(|(version,)| version)
    }

    /// Marks an exchange as being written until the guard drops (renewed every 5 s).
    pub fn answering(&self, conversation: &str, seq: u32) -> Alive {
        let Some(connection) = self.connection() else {
            return Alive(None);
        };
        let key = format!("cited:answering:{conversation}:{seq}");
        Alive(Some(tokio::spawn(async move {
            let mut connection = connection;
            let mut every = tokio::time::interval(RENEW);
            loop {
                every.tick().await;
                let set = redis::cmd("SET")
                    .arg(&key)
                    .arg(1)
                    .arg("PX")
                    .arg(ANSWERING_MS)
                    .query_async::<()>(&mut connection)
                    .await;
                if let Err(error) = set {
                    tracing::warn!(%error, "cannot renew the running answer's mark");
                }
            }
        })))
    }

    /// Every few seconds: exchanges stored as being written whose mark is gone (three
    /// looks in a row, so one just begun is never taken for dead) were cut off by their
    /// instance dying; they become `interrupted`.
    async fn reap(self: Arc<Shared>, store: Arc<Store>, shutdown: CancellationToken) {
        let mut suspects: HashMap<(String, u32), u32> = HashMap::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(REAP_EVERY) => {}
            }
            let answering = match store.answering().await {
                Ok(answering) => answering,
                Err(error) => {
                    tracing::warn!(%error, "cannot look for interrupted answers");
                    continue;
                }
            };
            let mut dead = Vec::new();
            for (conversation, seq) in answering {
                let alive: Option<i64> = self
                    .run(
                        "reaper",
                        redis::cmd("EXISTS").arg(format!("cited:answering:{conversation}:{seq}")),
                    )
                    .await;
                if alive == Some(0) {
                    dead.push((conversation, seq));
                }
            }
            let mut still = HashMap::new();
            for exchange in dead {
                let times = suspects.get(&exchange).copied().unwrap_or(0) + 1;
                if times < REAP_AFTER {
                    still.insert(exchange, times);
                    continue;
                }
                let (conversation, seq) = exchange;
                match store.interrupt(&conversation, seq).await {
                    Ok(()) => tracing::info!(
                        conversation,
                        seq,
                        "an answer whose instance stopped is marked interrupted"
                    ),
                    Err(error) => tracing::warn!(%error, "cannot mark an answer interrupted"),
                }
            }
            suspects = still;
        }
    }
}

/// How long a shared slot or a waiter lives unless renewed.
const SLOT_MS: u64 = 15_000;

/// Model-call permits: with Redis, `CITED_MAX_MODEL_CALLS` counts every instance's calls
/// (they share the model); without it, or when Redis fails, this process's semaphore.
pub struct ModelCalls {
    pub shared: Arc<Shared>,
    pub local: Arc<tokio::sync::Semaphore>,
    pub capacity: usize,
}

#[async_trait::async_trait]
impl crate::ssr::llm::limited::CallPermits for ModelCalls {
    async fn acquire(&self) -> Option<Box<dyn Send + Sync>> {
        if self.shared.is_shared() {
            if let Some(slot) = self.shared.slot("model-calls", self.capacity).await {
                return Some(Box::new(slot));
            }
        }
        self.local.acquire().await
    }
}

/// A slot of a shared semaphore; renewed while held, given back when dropped.
pub struct SharedSlot {
    renew: tokio::task::JoinHandle<()>,
    release: Option<(ConnectionManager, String, String)>,
}

impl Drop for SharedSlot {
    fn drop(&mut self) {
        self.renew.abort();
        if let (Some((mut connection, slots, ticket)), Ok(runtime)) =
            (self.release.take(), tokio::runtime::Handle::try_current())
        {
            runtime.spawn(async move {
                let removed = redis::cmd("ZREM")
                    .arg(&slots)
                    .arg(&ticket)
                    .query_async::<i64>(&mut connection)
                    .await;
                if let Err(error) = removed {
                    tracing::warn!(%error, "cannot give a shared slot back; it expires by itself");
                }
            });
        }
    }
}

/// Takes a waiter out of a shared queue it leaves before its turn (and gives back a slot
/// granted by a call it did not wait for).
struct Waiter {
    connection: ConnectionManager,
    slots: String,
    queue: String,
    waiting: String,
    ticket: String,
    served: bool,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if self.served {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut connection = self.connection.clone();
        let (slots, queue, waiting, ticket) = (
            self.slots.clone(),
            self.queue.clone(),
            self.waiting.clone(),
            self.ticket.clone(),
        );
        runtime.spawn(async move {
            let mut pipe = redis::pipe();
            pipe.cmd("ZREM").arg(&slots).arg(&ticket).ignore();
            pipe.cmd("ZREM").arg(&queue).arg(&ticket).ignore();
            pipe.cmd("ZREM").arg(&waiting).arg(&ticket).ignore();
            let _ = pipe.query_async::<()>(&mut connection).await;
        });
    }
}

impl Shared {
    /// How many hold a shared slot named `name` and how many wait for one, across every
    /// instance; `None` without Redis.
    pub async fn gate_load(&self, name: &str) -> Option<(u64, u64)> {
        let mut connection = self.connection()?;
        let mut pipe = redis::pipe();
        pipe.cmd("ZCARD")
            .arg(format!("cited:gate:{{{name}}}:slots"));
        pipe.cmd("ZCARD")
            .arg(format!("cited:gate:{{{name}}}:queue"));
        self.call("gate load", pipe.query_async::<(u64, u64)>(&mut connection))
            .await
    }

    /// Waits in arrival order for one of `capacity` slots named `name`, counted across
    /// every instance. `None` without Redis or when it fails (the caller counts alone).
    pub async fn slot(&self, name: &str, capacity: usize) -> Option<SharedSlot> {
        let connection = self.connection()?;
        // One hash tag: the four keys live in one slot of a Redis Cluster.
        let slots = format!("cited:gate:{{{name}}}:slots");
        let mut waiter = Waiter {
            connection: connection.clone(),
            slots: slots.clone(),
            queue: format!("cited:gate:{{{name}}}:queue"),
            waiting: format!("cited:gate:{{{name}}}:waiting"),
            ticket: random_key(),
            served: false,
        };
        let enter = redis::Script::new(ENTER);
        loop {
            let mut connection = connection.clone();
            let mut invocation = enter.key(&slots);
            invocation
                .key(&waiter.queue)
                .key(&waiter.waiting)
                .key(format!("cited:gate:{{{name}}}:seq"))
                .arg(&waiter.ticket)
                .arg(capacity)
                .arg(SLOT_MS);
            let place = invocation.invoke_async::<i64>(&mut connection);
            match self.call("slots", place).await? {
                0 => break,
                // Further back in line, asks less often.
                place => {
                    let pause = 50 * u64::try_from(place.clamp(1, 10)).unwrap_or(10);
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
            }
        }
        waiter.served = true;
        let ticket = waiter.ticket.clone();
        let renew = {
            let mut connection = connection.clone();
            let (slots, ticket) = (slots.clone(), ticket.clone());
            tokio::spawn(async move {
                let renew = redis::Script::new(RENEW_SLOT);
                let mut every = tokio::time::interval(RENEW);
                every.tick().await;
                loop {
                    every.tick().await;
                    let renewed = renew
                        .key(&slots)
                        .arg(&ticket)
                        .arg(SLOT_MS)
                        .invoke_async::<i64>(&mut connection)
                        .await;
                    if let Err(error) = renewed {
                        tracing::warn!(%error, "cannot renew a shared slot");
                    }
                }
            })
        };
        Some(SharedSlot {
            renew,
            release: Some((connection, slots, ticket)),
        })
    }
}

/// One turn of a shared first-come, first-served semaphore: `KEYS` slots, queue, waiting,
/// seq; `ARGV` the ticket, the capacity, the time to live in ms. Expired slots and waiters
/// are dropped; the ticket joins the queue (once) and renews itself; the first `free` of
/// the queue take a slot. Returns 0 (a slot taken) or the ticket's place in line.
const ENTER: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, ticket in ipairs(gone) do
  redis.call('ZREM', KEYS[2], ticket)
  redis.call('ZREM', KEYS[3], ticket)
end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1])
end
redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
local free = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if rank < free then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  return 0
end
return rank - math.max(free, 0) + 1
";

/// Renews a held slot (`KEYS[1]` slots; `ARGV` ticket, time to live in ms).
const RENEW_SLOT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
";

/// A GCRA in one round trip: `ARGV[1]` the emission interval, `ARGV[2]` the tolerance
/// (interval × (burst − 1)), both in ms. Returns 0 (go) or the ms to wait.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 then return math.ceil(wait) end
tat = tat + interval
redis.call('SET', KEYS[1], tostring(tat), 'PX', math.ceil(tat - now) + 1000)
return 0
";

fn hashed(text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}
