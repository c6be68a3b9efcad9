//! CPU-heavy work (page parsing, citation checks, indexing) runs on tokio's blocking threads,
//! never on the async workers, and at most one job per core at a time: a burst of Research
//! answers queues here instead of starving every other request on a small host. A long
//! job takes a [`Budget`] and stops once its caller's deadline passed or its answer was
//! stopped, so a job nobody waits for any more does not keep its core.

use std::sync::LazyLock;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

static PERMITS: LazyLock<Semaphore> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    Semaphore::new(cores)
});

/// Runs `work` on a blocking thread once a permit is free. `None` when it panicked.
/// The permit is held by the job itself, so a caller that stops waiting (a deadline) does
/// not free its core while the job still runs.
pub async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let permit = PERMITS.acquire().await.ok()?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    })
    .await
    .ok()
}

/// When a blocking job should give up: its caller's deadline, or the answer it serves
/// stopped. Checked between steps (each step is bounded on its own).
#[derive(Clone, Debug)]
pub struct Budget {
    until: std::time::Instant,
    cancel: CancellationToken,
}

impl Budget {
    pub fn new(until: std::time::Instant, cancel: CancellationToken) -> Budget {
        Budget { until, cancel }
    }

    /// The deadline passed or the answer stopped.
    pub fn spent(&self) -> bool {
        self.cancel.is_cancelled() || std::time::Instant::now() >= self.until
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_budget_is_spent_at_its_deadline_or_when_stopped() {
        let cancel = CancellationToken::new();
        let later = Budget::new(Instant::now() + Duration::from_secs(60), cancel.clone());
        assert!(!later.spent());
        cancel.cancel();
        assert!(later.spent(), "the answer stopped");
        let past = Budget::new(Instant::now(), CancellationToken::new());
        assert!(past.spent(), "the deadline passed");
    }
}
