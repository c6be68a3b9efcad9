//! How much the app takes on at once, and from whom (`Capacity`): a fair queue for answers
//! (and a narrower one for Research), semaphores for model calls and page reads, and rate
//! limits per user and per address (GCRA, `governor`).
//!
//! The queue is fair between owners (a user, or an anonymous browser): a freed slot goes to
//! the waiter whose owner has the fewest answers running, the earliest first among equals,
//! so one account's many sessions or API clients take their turn with everyone else's
//! instead of ahead of them. Each waiter can be told its place, so the status line says
//! "排队中，第 N 位" instead of hanging. A waiter that goes away (stop, the browser closed)
//! leaves the queue at once.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::ssr::config::Capacity;

/// A queue in front of `capacity` slots, fair between owners.
pub struct Gate {
    capacity: usize,
    state: Mutex<GateState>,
    changed: Notify,
}

#[derive(Default)]
struct GateState {
    running: usize,
    /// Slots held, by owner (owners holding none are not kept).
    running_by: HashMap<String, usize>,
    /// (ticket, owner), in arrival order.
    queue: VecDeque<(u64, String)>,
    next_ticket: u64,
}

impl GateState {
    /// The tickets in the order they will be served: fewest running for their owner
    /// first, then by arrival.
    fn order(&self) -> Vec<u64> {
        let mut order: Vec<(usize, usize, u64)> = self
            .queue
            .iter()
            .enumerate()
            .map(|(arrival, (ticket, owner))| {
                (
                    self.running_by.get(owner).copied().unwrap_or(0),
                    arrival,
                    *ticket,
                )
            })
            .collect();
        order.sort_unstable();
        order.into_iter().map(|(_, _, ticket)| ticket).collect()
    }

    fn take(&mut self, owner: &str) {
        self.running += 1;
        *self.running_by.entry(owner.to_string()).or_insert(0) += 1;
    }
}

/// A slot of a [`Gate`]; dropping it frees the slot.
pub struct Slot {
    gate: Arc<Gate>,
    owner: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.gate.lock();
        state.running -= 1;
        if let Some(count) = state.running_by.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                state.running_by.remove(&self.owner);
            }
        }
        drop(state);
        self.gate.changed.notify_waiters();
    }
}

/// Removes a ticket from the queue when its waiter goes away before its turn.
struct Waiting<'a> {
    gate: &'a Gate,
    ticket: u64,
    served: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.served {
            let mut state = self.gate.lock();
            state.queue.retain(|(ticket, _)| *ticket != self.ticket);
            drop(state);
            self.gate.changed.notify_waiters();
        }
    }
}

impl Gate {
    pub fn new(capacity: usize) -> Arc<Gate> {
        Arc::new(Gate {
            capacity: capacity.max(1),
            state: Mutex::new(GateState::default()),
            changed: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers running and waiting.
    pub fn load(&self) -> (usize, usize) {
        let state = self.lock();
        (state.running, state.queue.len())
    }

    /// A slot for `owner` at once, without queueing, when one is free and nobody waits.
    pub fn try_enter(self: &Arc<Gate>, owner: &str) -> Option<Slot> {
        let mut state = self.lock();
        if state.queue.is_empty() && state.running < self.capacity {
            state.take(owner);
            return Some(Slot {
                gate: Arc::clone(self),
                owner: owner.to_string(),
            });
        }
        None
    }

    /// Waits for a slot for `owner`, fairly between owners. `place` hears the waiter's
    /// place in the queue (1 = next) whenever it changes; not at all when a slot is free at
    /// once.
    pub async fn enter(self: &Arc<Gate>, owner: &str, mut place: impl FnMut(usize)) -> Slot {
        if let Some(slot) = self.try_enter(owner) {
            return slot;
        }
        let ticket = {
            let mut state = self.lock();
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.queue.push_back((ticket, owner.to_string()));
            ticket
        };
        let mut waiting = Waiting {
            gate: self,
            ticket,
            served: false,
        };
        let mut told = 0;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = self.lock();
                let position = state.order().iter().position(|t| *t == ticket).unwrap_or(0);
                if position == 0 && state.running < self.capacity {
                    state.queue.retain(|(t, _)| *t != ticket);
                    state.take(owner);
                    waiting.served = true;
                    drop(state);
                    // The next in line may fit too.
                    self.changed.notify_waiters();
                    return Slot {
                        gate: Arc::clone(self),
                        owner: owner.to_string(),
                    };
                }
                if position + 1 != told {
                    told = position + 1;
                    drop(state);
                    place(told);
                }
            }
            changed.await;
        }
    }
}

/// Rate limits by a key: at most `per_minute`, with a burst of a fifth of it (at least
/// `min_burst`).
pub struct Rate<K: std::hash::Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    /// Its name among the shared limits (`ssr::shared` keeps one GCRA per name and key).
    pub name: &'static str,
    pub per_minute: u32,
    /// How many may go at once.
    pub burst: u32,
}

impl<K: std::hash::Hash + Eq + Clone> Rate<K> {
    pub fn per_minute(name: &'static str, per_minute: u32, min_burst: u32) -> Rate<K> {
        let rate = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new((per_minute / 5).max(min_burst).min(per_minute.max(1)))
            .unwrap_or(NonZeroU32::MIN);
        Rate {
            limiter: RateLimiter::keyed(Quota::per_minute(rate).allow_burst(burst)),
            name,
            per_minute: rate.get(),
            burst: burst.get(),
        }
    }

    /// `Ok`, or how long until the key may go again.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        self.limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Forgets keys whose limit has fully recovered.
    pub fn sweep(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// Failures counted by a key, for sign-ins: a key with `allowed` failures in its window
/// waits until the window ends; a success clears it. Only failures count, after the
/// password was checked, so trying costs a guesser and never the person who knows it.
pub struct Failures {
    allowed: u32,
    window: Duration,
    seen: std::sync::Mutex<std::collections::HashMap<(IpAddr, String), (u32, std::time::Instant)>>,
}

impl Failures {
    pub fn new(allowed: u32, window: Duration) -> Failures {
        Failures {
            allowed,
            window,
            seen: std::sync::Mutex::default(),
        }
    }

    fn seen(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<(IpAddr, String), (u32, std::time::Instant)>,
    > {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long `name` must wait before trying again from `address`, if it must.
    pub fn blocked(&self, address: IpAddr, name: &str) -> Option<Duration> {
        let seen = self.seen();
        let (count, since) = seen.get(&(address, name.to_string()))?;
        let over = since.elapsed();
        (*count >= self.allowed && over < self.window).then(|| self.window - over)
    }

    /// A wrong password for `name` from `address`.
    pub fn failed(&self, address: IpAddr, name: &str) {
        let mut seen = self.seen();
        let entry = seen
            .entry((address, name.to_string()))
            .or_insert((0, std::time::Instant::now()));
        if entry.1.elapsed() >= self.window {
            *entry = (0, std::time::Instant::now());
        }
        entry.0 += 1;
    }

    /// A correct one: the slate is clean.
    pub fn succeeded(&self, address: IpAddr, name: &str) {
        self.seen().remove(&(address, name.to_string()));
    }

    /// Forgets windows that ended.
    pub fn sweep(&self) {
        let window = self.window;
        self.seen().retain(|_, (_, since)| since.elapsed() < window);
    }
}

/// The key an address is rate-limited under: IPv6 by its /64 (one subscriber's block, in
/// which a client can pick any address), IPv4 as it is.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & (!0u128 << 64);
                IpAddr::V6(std::net::Ipv6Addr::from(bits))
            }
        },
        v4 => v4,
    }
}

/// Every limit of one app.
pub struct Limits {
    pub answers: Arc<Gate>,
    pub research: Arc<Gate>,
    pub model_calls: Arc<Semaphore>,
    pub page_reads: Arc<Semaphore>,
    /// Questions per user (or anonymous browser).
    pub asks: Rate<String>,
    /// Questions per client address (ten times the per-user rate).
    pub asks_per_address: Rate<IpAddr>,
    /// Files added per user (or anonymous browser): as many as questions, counted apart.
    pub uploads: Rate<String>,
    /// Requests per client address.
    pub requests: Rate<IpAddr>,
    /// Thumbnail and favicon requests per client address: a page of sources asks many at
    /// once, so they have their own, larger burst.
    pub media: Rate<IpAddr>,
    /// Shared conversations opened per client address (`CITED_RATE_SHARES_PER_MIN`).
    pub shares: Rate<IpAddr>,
    /// Sign-in attempts per client address (10 at once, then 10 a minute).
    pub sign_ins: Rate<IpAddr>,
    /// Failed sign-ins by address and account name together (10 in 15 minutes): a
    /// stranger's guesses never lock the account's owner out.
    pub sign_in_failures: Failures,
    pub capacity: Capacity,
}

impl Limits {
    pub fn new(capacity: &Capacity) -> Limits {
        Limits {
            answers: Gate::new(capacity.answers),
            research: Gate::new(capacity.research),
            model_calls: Arc::new(Semaphore::new(capacity.model_calls)),
            page_reads: Arc::new(Semaphore::new(capacity.page_reads)),
            asks: Rate::per_minute("asks", capacity.asks_per_minute, 5),
            asks_per_address: Rate::per_minute(
                "asks-per-address",
                capacity.asks_per_minute.saturating_mul(10),
                50,
            ),
            uploads: Rate::per_minute("uploads", capacity.asks_per_minute, 5),
            requests: Rate::per_minute("requests", capacity.requests_per_minute, 20),
            media: Rate::per_minute("media", capacity.requests_per_minute, 100),
            shares: Rate::per_minute("shares", capacity.shares_per_minute, 10),
            sign_ins: Rate::per_minute("sign-ins", 10, 10),
            sign_in_failures: Failures::new(10, Duration::from_secs(15 * 60)),
            capacity: capacity.clone(),
        }
    }

    /// A model call's turn.
    pub async fn model_call(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.model_calls).acquire_owned().await.ok()
    }

    /// A page read's turn.
    pub async fn page_read(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.page_reads).acquire_owned().await.ok()
    }

    pub fn sweep(&self) {
        self.asks.sweep();
        self.asks_per_address.sweep();
        self.uploads.sweep();
        self.requests.sweep();
        self.media.sweep();
        self.shares.sweep();
        self.sign_ins.sweep();
        self.sign_in_failures.sweep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_queue_is_first_come_first_served_and_tells_each_its_place() {
        let gate = Gate::new(1);
        let first = gate
            .enter("someone", |_| panic!("a free slot is taken at once"))
            .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        for name in 0..3 {
            let waiter = Arc::clone(&gate);
            let tx = tx.clone();
            waiters.push(tokio::spawn(async move {
                let owner = format!("owner {name}");
                let slot = waiter
                    .enter(&owner, |place| {
                        let _ = tx.send((name, place));
                    })
                    .await;
                let _ = tx.send((name, 0));
                slot
            }));
            // Each joins the queue before the next.
            while gate.load().1 < name + 1 {
                tokio::task::yield_now().await;
            }
        }
        let mut heard = Vec::new();
        while heard.len() < 3 {
            heard.push(rx.recv().await.unwrap());
        }
        assert_eq!(heard, vec![(0, 1), (1, 2), (2, 3)]);
        // The second leaves: the third moves up.
        waiters.remove(1).abort();
        assert_eq!(rx.recv().await.unwrap(), (2, 2));
        drop(first);
        assert_eq!(
            rx.recv().await.unwrap(),
            (0, 0),
            "the first in line goes first"
        );
        let slot = waiters.remove(0).await.unwrap();
        assert_eq!(rx.recv().await.unwrap(), (2, 1));
        drop(slot);
        assert_eq!(rx.recv().await.unwrap(), (2, 0));
        assert_eq!(gate.load(), (1, 0));
    }

    #[tokio::test]
    async fn one_owner_with_many_waiting_takes_turns_with_the_others() {
        let gate = Gate::new(2);
        // The busy owner holds both slots and has five more waiting…
        let held = [
            gate.try_enter("busy").unwrap(),
            gate.try_enter("busy").unwrap(),
        ];
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        let join = |owner: &'static str, name: &'static str| {
            let waiter = Arc::clone(&gate);
            let tx = tx.clone();
            tokio::spawn(async move {
                let slot = waiter.enter(owner, |_| {}).await;
                let _ = tx.send(name);
                slot
            })
        };
        for name in ["busy 1", "busy 2", "busy 3", "busy 4", "busy 5"] {
            waiters.push(join("busy", name));
            while gate.load().1 < waiters.len() {
                tokio::task::yield_now().await;
            }
        }
        // …and then someone else asks, last in arrival order.
        waiters.push(join("other", "other"));
        while gate.load().1 < waiters.len() {
            tokio::task::yield_now().await;
        }
        // A slot frees: it goes to the owner with nothing running, not the sixth in line.
        let [first, second] = held;
        drop(first);
        assert_eq!(rx.recv().await.unwrap(), "other");
        drop(second);
        assert_eq!(rx.recv().await.unwrap(), "busy 1");
        assert_eq!(gate.load(), (2, 4));
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_block() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(address_key(v4), v4);
        assert_eq!(address_key("::ffff:192.0.2.7".parse().unwrap()), v4);
    }

    #[test]
    fn a_burst_over_the_rate_is_refused_with_the_wait() {
        let rate: Rate<String> = Rate::per_minute("test", 60, 5);
        let key = "alice".to_string();
        for _ in 0..12 {
            assert!(rate.check(&key).is_ok());
        }
        let wait = rate.check(&key).unwrap_err();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        assert!(rate.check(&"bob".to_string()).is_ok(), "keys are separate");
    }
}
