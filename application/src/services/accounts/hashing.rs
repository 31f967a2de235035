//! argon2id for the account service: at most one hash per core (four at most) at a time, each in
//! working memory kept from one hash to the next. Each hash holds 19 MiB while it runs; hashes
//! on tokio's blocking threads alone would run one per attempt of a burst (sign-ins from many
//! addresses, each within its own budget), and memory allocated afresh per hash stays with the
//! allocator after the burst (measured with the gate alone: 48 at once grew the server by
//! 550 MiB for good). Here the server holds at most one working memory per slot.
//!
//! Behind the slots at most [`WAITING_PER_SLOT`] attempts per slot wait their turn; one more is
//! refused at once with [`CpuBusy`] (503 with `Retry-After`), so a flood of attempts from many
//! addresses holds neither a queue that grows without end nor a connection per queued attempt.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_domain::account::password::{self, HashMemory, SALT_BYTES};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::services::cpu_gate::{CpuBusy, CpuGate};

/// Most hashes at once, whatever the cores: each slot keeps 19 MiB once it has hashed.
const MOST_SLOTS: usize = 4;
/// Attempts waiting per slot: a hash takes tens of milliseconds, so the last of them waits well
/// under a second.
const WAITING_PER_SLOT: usize = 16;
/// What a refused attempt is told: the queue ahead of it clears within a second.
const RETRY_AFTER_SECONDS: u64 = 1;

#[derive(Clone)]
pub(super) struct Hashing {
    /// Never refuses: an attempt that got a place in the queue waits its turn.
    gate: CpuGate,
    /// Places for attempts hashing or waiting: the slots and the queue behind them.
    places: Arc<Semaphore>,
    /// Working memories not in use; never more than the gate's slots.
    memories: Arc<Mutex<Vec<HashMemory>>>,
}

impl Hashing {
    pub(super) fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let slots = cores.min(MOST_SLOTS);
        Self::bounded(slots, slots * WAITING_PER_SLOT)
    }

    /// `slots` hashes at once, and at most `waiting` more waiting for one.
    pub(super) fn bounded(slots: usize, waiting: usize) -> Self {
        Self {
            gate: CpuGate::new(slots, Duration::ZERO),
            places: Arc::new(Semaphore::new(slots + waiting)),
            memories: Arc::default(),
        }
    }

    pub(super) async fn hash(&self, password: String, salt: [u8; SALT_BYTES]) -> Result<String, CpuBusy> {
        Ok(self.admit()?.hash(password, salt).await)
    }

    pub(super) async fn verify(&self, password: String, stored: String) -> Result<bool, CpuBusy> {
        Ok(self.admit()?.verify(password, stored).await)
    }

    /// A place in the queue, taken before work that a refusal must not waste (a reset link is
    /// spent before its new password is hashed); refused at once when the slots and the queue
    /// behind them are full.
    pub(super) fn admit(&self) -> Result<HashTurn, CpuBusy> {
        match self.places.clone().try_acquire_owned() {
            Ok(place) => Ok(HashTurn {
                hashing: self.clone(),
                place,
            }),
            Err(_) => Err(CpuBusy {
                retry_after_seconds: RETRY_AFTER_SECONDS,
            }),
        }
    }
}

/// One admitted hash: its place is held until the hash ends, even when its caller stopped
/// waiting for it, and given back unused when the turn is dropped before hashing.
pub(super) struct HashTurn {
    hashing: Hashing,
    place: OwnedSemaphorePermit,
}

impl HashTurn {
    pub(super) async fn hash(self, password: String, salt: [u8; SALT_BYTES]) -> String {
        self.run(move |memory| password::hash_in(&password, &salt, memory))
            .await
    }

    pub(super) async fn verify(self, password: String, stored: String) -> bool {
        self.run(move |memory| password::verify_in(&password, &stored, memory))
            .await
    }

    /// `work` on a blocking thread once a slot is free, in a kept working memory.
    async fn run<T: Send + 'static>(self, work: impl FnOnce(&mut HashMemory) -> T + Send + 'static) -> T {
        let Self { hashing, place } = self;
        let memories = hashing.memories.clone();
        hashing
            .gate
            .run_admitted(move || {
                let _held_until_the_hash_ends = place;
                let mut memory = memories.lock().expect("hash memories").pop().unwrap_or_default();
                let answer = work(&mut memory);
                memories.lock().expect("hash memories").push(memory);
                answer
            })
            .await
            .expect("argon2 does not panic")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// A fake slow hash: it runs until the test lets it finish.
    fn held(hashing: &Hashing, answer: u8) -> (mpsc::Sender<()>, tokio::task::JoinHandle<Result<u8, CpuBusy>>) {
        let (release, released) = mpsc::channel::<()>();
        let hashing = hashing.clone();
        let task = tokio::spawn(async move {
            let turn = hashing.admit()?;
            Ok(turn
                .run(move |_| {
                    released.recv().ok();
                    answer
                })
                .await)
        });
        (release, task)
    }

    /// A quick hash, answered or refused within a bound (a refusal is never a wait).
    async fn quick(hashing: &Hashing, answer: u8) -> Result<u8, CpuBusy> {
        let hashed = async { Ok(hashing.admit()?.run(move |_| answer).await) };
        tokio::time::timeout(Duration::from_secs(10), hashed)
            .await
            .expect("answered or refused, never left waiting")
    }

    async fn until_places_left(hashing: &Hashing, left: usize) {
        while hashing.places.available_permits() != left {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn past_the_slots_and_the_queue_an_attempt_is_refused_at_once_and_served_once_there_is_room() {
        let hashing = Hashing::bounded(1, 1);
        let (release_first, first) = held(&hashing, 1);
        let (release_second, second) = held(&hashing, 2);
        until_places_left(&hashing, 0).await;

        let refused = quick(&hashing, 3).await;
        assert_eq!(
            refused,
            Err(CpuBusy { retry_after_seconds: 1 }),
            "one hashing, one waiting: the third is told to retry"
        );

        release_first.send(()).unwrap();
        release_second.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Ok(1));
        assert_eq!(second.await.unwrap(), Ok(2), "the waiting one was served");
        assert_eq!(quick(&hashing, 4).await, Ok(4), "room again once they ended");
    }

    #[tokio::test]
    async fn an_attempt_whose_caller_left_keeps_its_place_until_its_hash_ends() {
        let hashing = Hashing::bounded(1, 0);
        let (release, first) = held(&hashing, 1);
        until_places_left(&hashing, 0).await;
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        assert_eq!(
            quick(&hashing, 2).await,
            Err(CpuBusy { retry_after_seconds: 1 }),
            "the hash still runs"
        );
        release.send(()).unwrap();
        until_places_left(&hashing, 1).await;
        assert_eq!(quick(&hashing, 3).await, Ok(3));
    }
}
