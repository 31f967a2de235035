//! Handshakes this server issued that no render has consumed yet, kept in memory so the render
//! that follows a handshake (the warm path's second call) does not read it back and parse its
//! contract again. Only for a database this process alone writes (the SQLite default, like the
//! session `ReadCache`): another replica could consume a handshake behind this one's back.
//!
//! Only an insert fills it, once its row committed, with a handshake nobody else knows yet (its id
//! is answered after); a consume or a release forgets the handshake before it writes; a read never
//! stores what it read. So no entry is older than its row: a render racing a consume reads the row,
//! as it would without the cache, and the consume's compare-and-set decides as always.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use svc_application::ports::agent::HandshakeRecord;
use svc_domain::handshake::HANDSHAKE_LIFETIME_MINUTES;

/// Memory the kept handshakes may use, counted as their stored text (contract, intent, variance).
const BUDGET_BYTES: u64 = 16 * 1024 * 1024;

struct Pending {
    record: HandshakeRecord,
    weight: u32,
}

#[derive(Clone)]
pub struct PendingHandshakes {
    kept: Cache<String, Arc<Pending>>,
}

impl PendingHandshakes {
    pub fn new() -> Self {
        let lifetime = u64::try_from(HANDSHAKE_LIFETIME_MINUTES).unwrap_or(10) * 60;
        Self {
            kept: Cache::builder()
                .max_capacity(BUDGET_BYTES)
                .weigher(|_: &String, pending: &Arc<Pending>| pending.weight)
                // An older handshake is expired anyway; its row still answers.
                .time_to_live(Duration::from_secs(lifetime))
                .build(),
        }
    }

    /// Keeps a handshake whose row just committed; `stored_bytes` is the size of its row's text.
    pub fn keep(&self, record: &HandshakeRecord, stored_bytes: usize) {
        let weight = u32::try_from(stored_bytes).unwrap_or(u32::MAX).max(1);
        self.kept.insert(
            record.handshake_id.clone(),
            Arc::new(Pending {
                record: record.clone(),
                weight,
            }),
        );
    }

    pub fn get(&self, handshake_id: &str) -> Option<HandshakeRecord> {
        self.kept.get(handshake_id).map(|pending| pending.record.clone())
    }

    /// Called before a write of the handshake's row.
    pub fn forget(&self, handshake_id: &str) {
        self.kept.invalidate(handshake_id);
    }
}

impl Default for PendingHandshakes {
    fn default() -> Self {
        Self::new()
    }
}
