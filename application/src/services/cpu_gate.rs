//! The one gate of CPU-heavy work on untrusted input (schema compilation and validation, TSX
//! compilation, the render check): each runs on a blocking thread only while it holds one of a
//! bounded number of slots. Tokio's blocking pool grows to hundreds of threads, so without the
//! gate a burst of heavy requests would run all at once and starve the machine (and `/healthz`).
//! A caller that gets no slot within the wait is refused with [`CpuBusy`] and told when to retry.
//!
//! The slot is held by the blocking work itself, not by its caller: work a caller stopped waiting
//! for (a deadline, a dropped request) keeps its slot until it really ends, so the gate counts
//! what the machine is doing.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// Longest a caller waits on a JSON Schema's compile (with one validation) run on the gate before
/// it answers an error. The schema complexity budgets keep real work far below it; the deadline
/// keeps a caller from waiting on whatever the budgets did not foresee.
pub const SCHEMA_WORK_DEADLINE: Duration = Duration::from_secs(2);

/// No slot became free within the gate's wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the server is busy with other heavy work; retry in {retry_after_seconds} s")]
pub struct CpuBusy {
    pub retry_after_seconds: u64,
}

/// Why gated work gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum CpuWorkError {
    #[error(transparent)]
    Busy(#[from] CpuBusy),
    /// The work panicked on its thread (a defect; the message is for the log).
    #[error("the work panicked: {0}")]
    Panicked(String),
}

#[derive(Clone)]
pub struct CpuGate {
    slots: Arc<Semaphore>,
    /// How many slots there are, taken or not.
    slot_count: usize,
    wait: Duration,
}

impl CpuGate {
    /// `concurrency` slots (0: one per core), each awaited at most `wait`.
    pub fn new(concurrency: usize, wait: Duration) -> Self {
        let slots = match concurrency {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Self {
            slots: Arc::new(Semaphore::new(slots)),
            slot_count: slots,
            wait,
        }
    }

    /// A gate that never refuses: for unit tests and tools that run one request at a time.
    pub fn unbounded() -> Self {
        Self {
            slots: Arc::new(Semaphore::new(Semaphore::MAX_PERMITS)),
            slot_count: Semaphore::MAX_PERMITS,
            wait: Duration::ZERO,
        }
    }

    /// How many works may run at once: a queue in front of the gate is sized by it.
    pub fn slot_count(&self) -> usize {
        self.slot_count
    }

    /// Runs `work` on a blocking thread once a slot is free; refused when none frees within the
    /// wait.
    pub async fn run<T, F>(&self, work: F) -> Result<T, CpuWorkError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.start(work)
            .await?
            .await
            .map_err(|panicked| CpuWorkError::Panicked(panicked.to_string()))
    }

    /// Starts `work` on a blocking thread once a slot is free and hands back its handle, so a
    /// caller can put a deadline on the work alone (not on the wait); refused when no slot frees
    /// within the wait.
    pub async fn start<T, F>(&self, work: F) -> Result<JoinHandle<T>, CpuBusy>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        match tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(slot)) => Ok(Self::spawn_holding(slot, work)),
            // The semaphore is never closed; a closed one refuses like a full one.
            Ok(Err(_)) | Err(_) => Err(self.busy()),
        }
    }

    /// Runs `work` once a slot is free, however long that takes: for work a queue already admitted
    /// (a generation holds a slot of the generation queue, which refuses on its own), so it is
    /// bounded with the rest but never refused halfway.
    pub async fn run_admitted<T, F>(&self, work: F) -> Result<T, CpuWorkError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return Err(self.busy().into());
        };
        Self::spawn_holding(slot, work)
            .await
            .map_err(|panicked| CpuWorkError::Panicked(panicked.to_string()))
    }

    fn spawn_holding<T, F>(slot: OwnedSemaphorePermit, work: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        tokio::task::spawn_blocking(move || {
            let _held_until_the_work_ends = slot;
            work()
        })
    }

    /// The refusal, with the wait rounded up to whole seconds (at least one).
    fn busy(&self) -> CpuBusy {
        CpuBusy {
            retry_after_seconds: self.wait.as_millis().div_ceil(1000).max(1) as u64,
        }
    }
}

impl Default for CpuGate {
    fn default() -> Self {
        Self::unbounded()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[tokio::test]
    async fn a_caller_waits_for_a_slot_and_is_refused_when_none_frees() {
        let gate = CpuGate::new(1, Duration::from_millis(1500));
        let (release, released) = mpsc::channel::<()>();
        let holding = gate.clone();
        let first = tokio::spawn(async move { holding.run(move || released.recv().ok()).await });
        while gate.slots.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let refused = gate.run(|| 2).await;
        assert!(
            matches!(refused, Err(CpuWorkError::Busy(CpuBusy { retry_after_seconds: 2 }))),
            "1.5 s of wait is a retry in 2 s"
        );
        release.send(()).unwrap();
        assert!(first.await.unwrap().unwrap().is_some());
        assert_eq!(gate.run(|| 3).await.unwrap(), 3, "the slot is free again");
    }

    #[tokio::test]
    async fn zero_concurrency_is_one_slot_per_core() {
        let gate = CpuGate::new(0, Duration::from_secs(1));
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(gate.slots.available_permits(), cores);
    }

    #[tokio::test]
    async fn a_panic_is_reported_not_propagated() {
        let gate = CpuGate::new(1, Duration::from_secs(1));
        let outcome = gate.run(|| -> u8 { panic!("boom") }).await;
        assert!(matches!(outcome, Err(CpuWorkError::Panicked(_))));
        assert_eq!(gate.run(|| 1).await.unwrap(), 1, "the slot came back");
    }
}
