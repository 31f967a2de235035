//! The server's budget of replay pieces being read at once: a piece is parsed from stored JSON
//! into values (tens of times the text for some JSON) and rendered into frames, so sockets that
//! (re)subscribe together must not all do that at once. Every piece a socket reads, on
//! subscribing or catching up, takes its share of [`REPLAY_BYTES_IN_FLIGHT`] first and gives it
//! back once its frames are rendered and the parsed values dropped; a socket finding the budget
//! taken waits (within its write deadline), it is not refused. Only a subscribe's first reads,
//! before its `ack`, wait no longer than
//! [`LiveTimings::replay_share_before_ack`](super::timings::LiveTimings::replay_share_before_ack):
//! the socket reads nothing else meanwhile, so past it the subscribe is answered `SERVER_BUSY`.
//! The sockets that hear a large event's marker make one read of it, taking one share
//! (`svc_application::services::agent::SharedStreamReads`). Sending the frames takes no share:
//! a peer that reads slowly holds only its own piece's frames, never the budget.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Stored bytes of replay pieces being read and rendered at once, server-wide: sixteen pieces.
pub(crate) const REPLAY_BYTES_IN_FLIGHT: usize = 16 * super::replay_pieces::PIECE_BYTES;

/// Shares of [`REPLAY_BYTES_IN_FLIGHT`], one per stored byte a piece may read.
#[derive(Clone)]
pub(crate) struct ReplayBudget {
    shares: Arc<Semaphore>,
    total: u32,
}

/// A piece's share of the budget, given back when dropped.
pub(crate) struct ReplayShare {
    _permit: OwnedSemaphorePermit,
}

impl Default for ReplayBudget {
    fn default() -> Self {
        Self::of_bytes(REPLAY_BYTES_IN_FLIGHT)
    }
}

impl ReplayBudget {
    pub(crate) fn of_bytes(bytes: usize) -> Self {
        let total = u32::try_from(bytes).unwrap_or(u32::MAX).max(1);
        Self {
            shares: Arc::new(Semaphore::new(total as usize)),
            total,
        }
    }

    /// Waits until `bytes` of the budget are free (all of it for a piece larger than the whole)
    /// and takes them. Waiters are served in order, so a large piece is not passed over forever.
    pub(crate) async fn take(&self, bytes: usize) -> ReplayShare {
        let wanted = u32::try_from(bytes).unwrap_or(u32::MAX).clamp(1, self.total);
        let permit = Arc::clone(&self.shares)
            .acquire_many_owned(wanted)
            .await
            .expect("the replay budget is never closed");
        ReplayShare { _permit: permit }
    }
}
