use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bounded generation: at most `concurrency` generations run, at most `max_waiting` wait, and a
/// waiter gives up after `max_wait`. With a per-principal cap (hosted mode), one principal holds
/// at most that many generations running plus waiting, so one caller cannot fill the queue every
/// other caller shares. A dropped slot (finished, cancelled or timed-out work) frees its place.
#[derive(Clone)]
pub struct GenerationQueue {
    slots: Arc<Semaphore>,
    concurrency: usize,
    waiting: Arc<AtomicUsize>,
    max_waiting: usize,
    max_wait: Duration,
    per_principal: Option<PrincipalCap>,
}

/// Generations each principal holds in the queue (running or waiting), and how many it may.
#[derive(Clone)]
struct PrincipalCap {
    cap: usize,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

impl PrincipalCap {
    /// Counts one more generation of `principal`, unless it already holds `cap`.
    fn take(&self, principal: &str) -> Option<PrincipalHold> {
        let mut held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let count = held.entry(principal.to_owned()).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(PrincipalHold {
            principal: principal.to_owned(),
            held: self.held.clone(),
        })
    }
}

/// One generation counted against its principal; dropping it uncounts it.
#[derive(Debug)]
struct PrincipalHold {
    principal: String,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for PrincipalHold {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = held.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.principal);
            }
        }
    }
}

/// A place in the queue: held while the generation runs, freed when dropped.
#[derive(Debug)]
pub struct QueueSlot {
    _permit: OwnedSemaphorePermit,
    _hold: Option<PrincipalHold>,
}

/// What the queue holds at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDepth {
    pub running: usize,
    pub waiting: usize,
}

/// The queue is saturated, or the principal holds its cap; try again after `retry_after_seconds`.
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
            per_principal: None,
        }
    }

    /// At most `cap` generations (running plus waiting) per principal (`hosted.generations_per_principal`).
    pub fn with_principal_cap(self, cap: usize) -> Self {
        Self {
            per_principal: Some(PrincipalCap {
                cap: cap.max(1),
                held: Arc::default(),
            }),
            ..self
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

    /// A slot for a generation of `principal` (the caller's user id, else its app id).
    pub async fn enter(&self, principal: &str) -> Result<QueueSlot, QueueFull> {
        let hold = match &self.per_principal {
            Some(cap) => match cap.take(principal) {
                Some(hold) => Some(hold),
                None => {
                    tracing::warn!(principal_id = principal, cap = cap.cap, "generation_principal_cap_hit");
                    return Err(self.full());
                }
            },
            None => None,
        };
        let permit = self.permit().await?;
        Ok(QueueSlot {
            _permit: permit,
            _hold: hold,
        })
    }

    async fn permit(&self) -> Result<OwnedSemaphorePermit, QueueFull> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(permit);
        }
        // Counted until this wait ends, however it ends: a render whose caller went away is
        // dropped while it waits, and a count left behind would refuse every later waiter.
        let waiter = Waiting::counted(&self.waiting);
        if waiter.ahead >= self.max_waiting {
            return Err(self.full());
        }
        let acquired = tokio::time::timeout(self.max_wait, self.slots.clone().acquire_owned()).await;
        match acquired {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(self.full()),
        }
    }
}

/// One waiter counted in the queue's `waiting` while it lives.
struct Waiting<'a> {
    count: &'a AtomicUsize,
    /// How many were waiting before this one.
    ahead: usize,
}

impl<'a> Waiting<'a> {
    fn counted(count: &'a AtomicUsize) -> Self {
        let ahead = count.fetch_add(1, Ordering::SeqCst);
        Self { count, ahead }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiter_dropped_while_it_waits_leaves_its_place() {
        let queue = GenerationQueue::new(1, 1, Duration::from_secs(60));
        let running = queue.enter("a").await.unwrap();
        // A render whose caller went away: dropped while it waits for the running one.
        let abandoned = tokio::time::timeout(Duration::from_millis(20), queue.enter("b")).await;
        assert!(abandoned.is_err(), "it was waiting");
        assert_eq!(queue.depth().waiting, 0);
        drop(running);
        assert!(queue.enter("c").await.is_ok(), "the queue still takes a waiter");
    }

    #[tokio::test]
    async fn saturation_is_reported_and_released_slots_are_reused() {
        let queue = GenerationQueue::new(1, 0, Duration::from_millis(50));
        assert_eq!(queue.depth(), QueueDepth { running: 0, waiting: 0 });
        let first = queue.enter("a").await.unwrap();
        assert_eq!(queue.depth(), QueueDepth { running: 1, waiting: 0 });
        assert_eq!(
            queue.enter("a").await.unwrap_err(),
            QueueFull { retry_after_seconds: 1 }
        );
        drop(first);
        assert_eq!(queue.depth().running, 0);
        assert!(queue.enter("a").await.is_ok());
    }

    #[tokio::test]
    async fn a_waiter_times_out() {
        let queue = GenerationQueue::new(1, 1, Duration::from_millis(20));
        let _held = queue.enter("a").await.unwrap();
        assert!(queue.enter("a").await.is_err());
    }

    #[tokio::test]
    async fn a_principal_at_its_cap_is_refused_while_others_still_enter() {
        let queue = GenerationQueue::new(4, 4, Duration::from_secs(3)).with_principal_cap(2);
        let first = queue.enter("greedy").await.unwrap();
        let _second = queue.enter("greedy").await.unwrap();
        assert_eq!(
            queue.enter("greedy").await.unwrap_err(),
            QueueFull { retry_after_seconds: 3 }
        );
        let _other = queue.enter("modest").await.unwrap();
        drop(first);
        assert!(
            queue.enter("greedy").await.is_ok(),
            "a finished generation frees its place"
        );
    }

    #[tokio::test]
    async fn a_refused_waiter_gives_its_place_back() {
        let queue = GenerationQueue::new(1, 0, Duration::from_millis(20)).with_principal_cap(1);
        let held = queue.enter("a").await.unwrap();
        assert!(queue.enter("b").await.is_err(), "the queue is full");
        drop(held);
        assert!(queue.enter("b").await.is_ok(), "b's refused attempt is not counted");
    }
}
