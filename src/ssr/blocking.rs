//! CPU-heavy work (page parsing, citation checks, indexing) runs on tokio's blocking threads,
//! never on the async workers, and at most one job per core at a time: a burst of Research
//! answers queues here instead of starving every other request on a small host.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

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
