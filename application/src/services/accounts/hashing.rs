//! argon2id for the account service: at most one hash per core (four at most) at a time, each in
//! working memory kept from one hash to the next. Each hash holds 19 MiB while it runs; hashes
//! on tokio's blocking threads alone would run one per attempt of a burst (sign-ins from many
//! addresses, each within its own budget), and memory allocated afresh per hash stays with the
//! allocator after the burst (measured with the gate alone: 48 at once grew the server by
//! 550 MiB for good). Here the server holds at most one working memory per slot.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_domain::account::password::{self, HashMemory, SALT_BYTES};

use crate::services::cpu_gate::CpuGate;

/// Most hashes at once, whatever the cores: each slot keeps 19 MiB once it has hashed.
const MOST_SLOTS: usize = 4;

#[derive(Clone)]
pub(super) struct Hashing {
    /// Never refuses: an attempt already passed its rate budgets and waits its turn.
    gate: CpuGate,
    /// Working memories not in use; never more than the gate's slots.
    memories: Arc<Mutex<Vec<HashMemory>>>,
}

impl Hashing {
    pub(super) fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            gate: CpuGate::new(cores.min(MOST_SLOTS), Duration::ZERO),
            memories: Arc::default(),
        }
    }

    pub(super) async fn hash(&self, password: String, salt: [u8; SALT_BYTES]) -> String {
        self.run(move |memory| password::hash_in(&password, &salt, memory))
            .await
    }

    pub(super) async fn verify(&self, password: String, stored: String) -> bool {
        self.run(move |memory| password::verify_in(&password, &stored, memory))
            .await
    }

    /// `work` on a blocking thread once a slot is free, in a kept working memory.
    async fn run<T: Send + 'static>(&self, work: impl FnOnce(&mut HashMemory) -> T + Send + 'static) -> T {
        let memories = self.memories.clone();
        self.gate
            .run_admitted(move || {
                let mut memory = memories.lock().expect("hash memories").pop().unwrap_or_default();
                let answer = work(&mut memory);
                memories.lock().expect("hash memories").push(memory);
                answer
            })
            .await
            .expect("argon2 does not panic")
    }
}
