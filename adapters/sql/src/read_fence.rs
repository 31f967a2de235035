//! The wait that lets a replica answer a read from memory without missing another replica's write.
//!
//! A replica keeps session rows (`read_cache.rs`) and forgets one when PostgreSQL announces its
//! change (`session_watch.rs`). An announcement is queued at the writer's commit, before the writer
//! answers anyone, but it reaches this replica's listener some time later. So a read may use the
//! cache only once a *fence* sent after the read began has passed: a statement on the listening
//! connection, which PostgreSQL answers only after every announcement queued before it read the
//! statement (a listening backend sends pending notifications before it takes the next message).
//! Every write acknowledged before the read began is then forgotten here. Reads that wait at the
//! same time share one fence; the watcher sends the next as soon as the last one passed.
//!
//! While the watcher is not listening (starting, reconnecting, stopped) the fence is *closed*:
//! every read goes to the database.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};

/// A read that waited this long for a fence reads the database instead (the watcher closes the
/// fence sooner when its statement fails or stalls; this bounds a wait on a watcher gone quiet).
const PATIENCE: Duration = Duration::from_secs(3);

/// Shared by the read cache (which waits) and the watcher (which sends and passes fences).
#[derive(Clone)]
pub(crate) struct Fence {
    inner: Arc<Inner>,
}

struct Inner {
    /// Fences sent so far; a fence's number is its count.
    sent: AtomicU64,
    progress: watch::Sender<Progress>,
    /// A read is waiting for the next fence.
    wanted: Notify,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    /// The number of the last fence that passed.
    passed: u64,
    /// The watcher is listening: what it forgot covers every announcement since the cache began.
    open: bool,
}

impl Fence {
    /// A closed fence: nothing is answered from memory until the watcher opens it.
    pub(crate) fn new() -> Self {
        let (progress, _) = watch::channel(Progress { passed: 0, open: false });
        Self {
            inner: Arc::new(Inner {
                sent: AtomicU64::new(0),
                progress,
                wanted: Notify::new(),
            }),
        }
    }

    /// Waits for a fence sent after this call to pass: `true` when it did, `false` when the fence
    /// is or became closed, or the wait ran out of patience (then the caller reads the database).
    pub(crate) async fn pass(&self) -> bool {
        let mut progress = self.inner.progress.subscribe();
        if !progress.borrow().open {
            return false;
        }
        // Any fence numbered above what is sent now is sent after this read began.
        let target = self.inner.sent.load(Ordering::SeqCst) + 1;
        self.inner.wanted.notify_one();
        let waited = tokio::time::timeout(PATIENCE, progress.wait_for(|p| !p.open || p.passed >= target)).await;
        matches!(waited, Ok(Ok(p)) if p.open)
    }

    /// The watcher: waits until a read wants a fence (or `idle` passed: the watcher drains its
    /// connection and checks it then too).
    pub(crate) async fn wanted(&self, idle: Duration) {
        let _ = tokio::time::timeout(idle, self.inner.wanted.notified()).await;
    }

    /// The watcher: numbers the fence it is about to send.
    pub(crate) fn sending(&self) -> u64 {
        self.inner.sent.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The watcher: fence `number` passed, and every announcement that came before it was
    /// forgotten. Also opens a closed fence (the watcher forgot everything after listening).
    pub(crate) fn passed(&self, number: u64) {
        self.inner.progress.send_modify(|p| {
            p.passed = p.passed.max(number);
            p.open = true;
        });
    }

    /// The watcher: announcements may be missed from now on; reads go to the database.
    pub(crate) fn close(&self) {
        self.inner.progress.send_modify(|p| p.open = false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_fence_sends_reads_to_the_database() {
        let fence = Fence::new();
        assert!(!fence.pass().await, "closed until the watcher listens");
        fence.passed(fence.sending());
        fence.close();
        assert!(!fence.pass().await);
    }

    #[tokio::test]
    async fn a_read_waits_for_a_fence_sent_after_it_began() {
        let fence = Fence::new();
        fence.passed(fence.sending());
        let in_flight = fence.sending();
        let read = tokio::spawn({
            let fence = fence.clone();
            async move { fence.pass().await }
        });
        // The watcher is told a read wants a fence.
        fence.wanted(Duration::from_secs(5)).await;
        fence.passed(in_flight);
        tokio::task::yield_now().await;
        assert!(
            !read.is_finished(),
            "the fence in flight was sent before the read began"
        );
        fence.passed(fence.sending());
        assert!(read.await.unwrap());
    }

    #[tokio::test]
    async fn a_fence_closed_while_a_read_waits_lets_it_go_to_the_database() {
        let fence = Fence::new();
        fence.passed(fence.sending());
        let read = tokio::spawn({
            let fence = fence.clone();
            async move { fence.pass().await }
        });
        fence.wanted(Duration::from_secs(5)).await;
        fence.close();
        assert!(!read.await.unwrap());
    }
}
