//! The answer log: each browser's latest answer as the events it sent, kept by the
//! instance writing it, so a refresh, a second tab or a reconnect follows it from any index
//! while it runs and replays it for a while after. One answer at a time per browser; the
//! stop button cancels it wherever it runs.
//!
//! This is the answer's own record, whether or not instances share anything. With
//! `CITED_REDIS_URL`, [`ssr::shared`](crate::ssr::shared) mirrors it (the busy mark, the
//! events as a stream, the stop signal) so other instances can follow and stop it; without,
//! nothing is encoded or sent.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::Stream;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::model::AnswerEvent;
use crate::ssr::shared::{browser_key, random_key, Shared};

/// How long an ended answer's events can still be replayed.
pub const KEEP_EVENTS: Duration = Duration::from_secs(600);

/// Events as they stream to a follower.
pub type Events = Pin<Box<dyn Stream<Item = AnswerEvent> + Send>>;

/// Why an answer cannot begin: the browser has one running (on any instance).
#[derive(Debug, PartialEq, Eq)]
pub struct Busy;

/// One answer being written by this instance: its events so far, and its stop token.
pub struct Live {
    /// What other instances know the answer by.
    pub key: String,
    cancel: CancellationToken,
    log: Mutex<Log>,
    changed: watch::Sender<usize>,
}

#[derive(Default)]
struct Log {
    events: Vec<AnswerEvent>,
    ended: Option<Instant>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Live {
    fn new(cancel: CancellationToken) -> Live {
        Live {
            key: random_key(),
            cancel,
            log: Mutex::new(Log::default()),
            changed: watch::Sender::new(0),
        }
    }

    /// Adds an event; its index.
    fn push(&self, event: AnswerEvent) -> usize {
        let index = {
            let mut log = lock(&self.log);
            log.events.push(event);
            log.events.len() - 1
        };
        self.changed.send_replace(index + 1);
        index
    }

    /// The index the next event will have.
    fn next_index(&self) -> usize {
        lock(&self.log).events.len()
    }

    fn end(&self) {
        lock(&self.log).ended = Some(Instant::now());
        self.changed.send_modify(|_| {});
    }

    pub fn running(&self) -> bool {
        lock(&self.log).ended.is_none()
    }

    /// Running, or ended less than [`KEEP_EVENTS`] ago.
    fn kept(&self) -> bool {
        lock(&self.log)
            .ended
            .is_none_or(|at| at.elapsed() < KEEP_EVENTS)
    }

    /// The events from `from` on, then each as it comes, until the answer ends.
    pub fn follow(self: &Arc<Live>, from: usize) -> Events {
        let seen = self.changed.subscribe();
        let state = (
            Arc::clone(self),
            seen,
            from,
            std::collections::VecDeque::new(),
        );
        Box::pin(futures_util::stream::unfold(
            state,
            |(live, mut seen, mut next, mut pending)| async move {
                loop {
                    if let Some(event) = pending.pop_front() {
                        return Some((event, (live, seen, next, pending)));
                    }
                    seen.borrow_and_update();
                    let ended = {
                        let log = lock(&live.log);
                        pending.extend(log.events.iter().skip(next).cloned());
                        log.ended.is_some()
                    };
                    next += pending.len();
                    if !pending.is_empty() {
                        continue;
                    }
                    if ended || seen.changed().await.is_err() {
                        return None;
                    }
                }
            },
        ))
    }
}

/// Every browser's latest answer written here, and the mirror other instances read.
pub struct AnswerLog {
    latest: Mutex<HashMap<String, Arc<Live>>>,
    shared: Arc<Shared>,
}

impl AnswerLog {
    pub fn new(shared: Arc<Shared>) -> AnswerLog {
        AnswerLog {
            latest: Mutex::new(HashMap::new()),
            shared,
        }
    }

    fn running_here(&self, browser: &str) -> bool {
        lock(&self.latest)
            .get(browser)
            .is_some_and(|live| live.running())
    }

    /// A new answer for the browser of `session_id`, or `Busy` when it already has one
    /// running (on any instance).
    pub async fn begin(
        &self,
        session_id: &str,
        cancel: CancellationToken,
    ) -> Result<Arc<Live>, Busy> {
        let browser = browser_key(session_id);
        if self.running_here(&browser) {
            return Err(Busy);
        }
        let live = Arc::new(Live::new(cancel));
        if !self.shared.claim(&browser, &live.key, KEEP_EVENTS).await {
            return Err(Busy);
        }
        let mut latest = lock(&self.latest);
        if latest.get(&browser).is_some_and(|live| live.running()) {
            return Err(Busy);
        }
        latest.retain(|_, live| live.kept());
        latest.insert(browser, Arc::clone(&live));
        Ok(live)
    }

    /// Takes the answer's events as the pipeline sends them and keeps them for followers
    /// (mirrored for other instances when shared); ends when the pipeline does. The answer
    /// goes on whether anyone follows or not.
    pub async fn record(
        &self,
        session_id: &str,
        live: Arc<Live>,
        mut events: mpsc::Receiver<AnswerEvent>,
    ) {
        let browser = browser_key(session_id);
        let mut mirror = self.shared.mirror(&browser, &live.key, KEEP_EVENTS);
        let mut mirroring = mirror.is_some();
        let mut renew = tokio::time::interval(crate::ssr::shared::RENEW);
        renew.tick().await;
        loop {
            let first = tokio::select! {
                event = events.recv() => event,
                _ = renew.tick(), if mirror.is_some() => {
                    if let Some(mirror) = &mirror {
                        mirror.renew().await;
                    }
                    continue;
                }
            };
            let Some(first) = first else { break };
            let mut batch = vec![first];
            while batch.len() < 256 {
                match events.try_recv() {
                    Ok(event) => batch.push(event),
                    Err(_) => break,
                }
            }
            // Once mirroring failed the events stay here only, but the busy mark is still
            // renewed (taken again after a restarted Redis), so no second answer starts.
            for event in batch {
                if let Some(mirror) = mirror.as_mut().filter(|_| mirroring) {
                    mirror.add(live.next_index(), &event);
                }
                live.push(event);
            }
            if let Some(kept) = mirror.as_mut().filter(|_| mirroring) {
                mirroring = kept.flush().await;
            }
        }
        // Other instances hear the end first: once it is said, the browser is free
        // everywhere and no follower waits on it.
        self.shared.ended(&browser, &live.key, KEEP_EVENTS).await;
        live.end();
    }

    /// The browser's latest answer as events from index `from` on, following it live
    /// while it runs, wherever it runs. `None` when it has none (`running`: none still
    /// running).
    pub async fn follow(&self, session_id: &str, from: usize, running: bool) -> Option<Events> {
        let browser = browser_key(session_id);
        let here = lock(&self.latest)
            .get(&browser)
            .filter(|live| !running || live.running())
            .cloned();
        if !self.shared.is_shared() {
            return here.map(|live| live.follow(from));
        }
        match (here, self.shared.latest_key(&browser, running).await) {
            (Some(live), Some(key)) if live.key == key => Some(live.follow(from)),
            (_, Some(key)) => self.shared.follow_elsewhere(&browser, key, from).await,
            (here, None) => here.map(|live| live.follow(from)),
        }
    }

    /// Stops the browser's running answer, on whichever instance runs it. False when it
    /// has none.
    pub async fn stop(&self, session_id: &str) -> bool {
        let browser = browser_key(session_id);
        let here = lock(&self.latest).get(&browser).cloned();
        if let Some(live) = here.filter(|live| live.running()) {
            live.cancel.cancel();
            return true;
        }
        self.shared.signal_stop(&browser).await
    }

    /// Stops the answer `key` if this instance runs it (a stop signal from another).
    pub fn stop_here(&self, key: &str) -> bool {
        let live = lock(&self.latest)
            .values()
            .find(|live| live.key == key)
            .cloned();
        match live {
            Some(live) if live.running() => {
                live.cancel.cancel();
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn event(n: u64) -> AnswerEvent {
        AnswerEvent::Token {
            text: format!("t{n} "),
        }
    }

    #[tokio::test]
    async fn a_follower_replays_from_its_index_then_follows_live() {
        let log = Arc::new(AnswerLog::new(Arc::new(Shared::new(None, Duration::ZERO))));
        let live = log
            .begin("browser", CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(
            log.begin("browser", CancellationToken::new()).await.err(),
            Some(Busy),
            "one answer at a time per browser"
        );
        let (sender, receiver) = mpsc::channel(8);
        let recording = {
            let (log, live) = (Arc::clone(&log), Arc::clone(&live));
            async move { log.record("browser", live, receiver).await }
        };
        let recording = tokio::spawn(recording);
        for n in 0..3 {
            sender.send(event(n)).await.unwrap();
        }
        let late = live.follow(1);
        tokio::spawn(async move {
            for n in 3..6 {
                sender.send(event(n)).await.unwrap();
            }
        });
        let seen: Vec<AnswerEvent> = late.collect().await;
        assert_eq!(seen, (1..6).map(event).collect::<Vec<_>>());
        recording.await.unwrap();
        assert!(!live.running());
        let again: Vec<AnswerEvent> = live.follow(0).collect().await;
        assert_eq!(again.len(), 6, "an ended answer replays whole");
        let followed: Vec<AnswerEvent> = log
            .follow("browser", 4, false)
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(followed, (4..6).map(event).collect::<Vec<_>>());
        assert!(
            log.follow("browser", 0, true).await.is_none(),
            "none running"
        );
        assert!(!log.stop("browser").await, "nothing to stop");
    }

    #[tokio::test]
    async fn stop_cancels_the_running_answer_by_browser_or_key() {
        let log = AnswerLog::new(Arc::new(Shared::new(None, Duration::ZERO)));
        let cancel = CancellationToken::new();
        let live = log.begin("browser", cancel.clone()).await.unwrap();
        assert!(!log.stop_here("another key"));
        assert!(log.stop_here(&live.key) && cancel.is_cancelled());
        let cancel = CancellationToken::new();
        let _other = log.begin("second", cancel.clone()).await.unwrap();
        assert!(log.stop("second").await && cancel.is_cancelled());
    }
}
