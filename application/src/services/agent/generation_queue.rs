use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bounded generation: at most `concurrency` generations run, at most `max_waiting` wait, and a
/// waiter gives up after `max_wait`. A dropped permit (finished, cancelled or timed-out work)
/// frees its slot.
#[derive(Clone)]
pub struct GenerationQueue {
    slots: Arc<Semaphore>,
    concurrency: usize,
    waiting: Arc<AtomicUsize>,
    max_waiting: usize,
    max_wait: Duration,
}

/// What the queue holds at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDepth {
    pub running: usize,
    pub waiting: usize,
}

/// The queue is saturated; try again after `retry_after_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull {
    pub retry_after_seconds: u64,
}

impl GenerationQueue {
    pub fn new(concurrency: usize, max_waiting: usize, max_wait: Duration) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            concurrency: concurrency.max(1),
            waiting: Arc::new(AtomicUsize::new(0)),
            max_waiting,
            max_wait,
        }
    }

    /// Generations running and waiting now (for the metrics scrape).
    pub fn depth(&self) -> QueueDepth {
        QueueDepth {
            running: self.concurrency.saturating_sub(self.slots.available_permits()),
            waiting: self.waiting.load(Ordering::SeqCst),
        }
    }

    fn full(&self) -> QueueFull {
        QueueFull {
            retry_after_seconds: self.max_wait.as_secs().max(1),
        }
    }

    pub async fn enter(&self) -> Result<OwnedSemaphorePermit, QueueFull> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(self.full());
        }
        let acquired = tokio::time::timeout(self.max_wait, self.slots.clone().acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        match acquired {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(self.full()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn saturation_is_reported_and_released_slots_are_reused() {
        let queue = GenerationQueue::new(1, 0, Duration::from_millis(50));
        assert_eq!(queue.depth(), QueueDepth { running: 0, waiting: 0 });
        let first = queue.enter().await.unwrap();
        assert_eq!(queue.depth(), QueueDepth { running: 1, waiting: 0 });
        assert_eq!(queue.enter().await.unwrap_err(), QueueFull { retry_after_seconds: 1 });
        drop(first);
        assert_eq!(queue.depth().running, 0);
        assert!(queue.enter().await.is_ok());
    }

    #[tokio::test]
    async fn a_waiter_times_out() {
        let queue = GenerationQueue::new(1, 1, Duration::from_millis(20));
        let _held = queue.enter().await.unwrap();
        assert!(queue.enter().await.is_err());
    }
}
