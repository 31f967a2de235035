//! Reads of the live tail that every socket of a session makes at once. A large event travels
//! the bus as a marker ([`LiveEvent::DataStored`](crate::ports::agent::LiveEvent)), and every
//! socket that hears it reads the envelope from the store and renders its frame: N sockets were
//! N reads and N parses of a payload over 64 KiB. [`SharedStreamReads`] makes that one read and
//! one rendering for all the callers that ask for the same envelopes (same session, same cursor,
//! same last `seq`) at about the same time: the first reads, the others wait for its frames, and
//! the frames stay [`KEPT_FOR`] for the sockets that hear the marker a little later.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;

use super::AgentError;

/// How long rendered frames stay after their read, for callers that ask a little later.
const KEPT_FOR: Duration = Duration::from_secs(5);

/// Bytes of rendered frames kept at once, server-wide (a read carries at most
/// [`REPLAY_MAX_PAYLOAD_BYTES`](super::REPLAY_MAX_PAYLOAD_BYTES) of payloads).
const KEPT_BYTES: u64 = 64 << 20;

/// Frames rendered once and shared by every caller that asked for them.
pub type SharedFrames = Arc<[String]>;

/// Session, cursor (`after`) and last `seq` of a read.
type Key = (String, i64, i64);

/// A read's frames, once the caller reading them has rendered them.
type Slot = Arc<OnceCell<SharedFrames>>;

/// One read per (session, cursor, last `seq`) for the callers asking at about the same time.
#[derive(Clone)]
pub struct SharedStreamReads {
    slots: moka::sync::Cache<Key, Slot>,
}

impl Default for SharedStreamReads {
    fn default() -> Self {
        Self {
            slots: moka::sync::Cache::builder()
                .max_capacity(KEPT_BYTES)
                .weigher(|_, slot: &Slot| slot.get().map_or(1, |frames| weight(frames)))
                .time_to_live(KEPT_FOR)
                .build(),
        }
    }
}

fn weight(frames: &[String]) -> u32 {
    let bytes: usize = frames.iter().map(String::len).sum();
    u32::try_from(bytes).unwrap_or(u32::MAX).max(1)
}

impl SharedStreamReads {
    /// The frames of `session_id`'s envelopes after `after` up to `until`: `read` reads and
    /// renders them, for the first caller only; callers asking meanwhile wait for its frames, and
    /// later ones within [`KEPT_FOR`] take them as they are. A read that fails (or whose caller
    /// goes away) is not kept: a waiting caller then reads itself.
    pub(super) async fn frames<F, Fut>(
        &self,
        session_id: &str,
        after: i64,
        until: i64,
        read: F,
    ) -> Result<SharedFrames, AgentError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<String>, AgentError>>,
    {
        let key = (session_id.to_owned(), after, until);
        let slot = self.slots.get_with_by_ref(&key, || Arc::new(OnceCell::new()));
        let mut read_here = false;
        let frames = slot
            .get_or_try_init(|| {
                read_here = true;
                async { read().await.map(SharedFrames::from) }
            })
            .await?
            .clone();
        if read_here {
            // Again, now that it holds frames: weighed by them, and kept for [`KEPT_FOR`] from now.
            self.slots.insert(key, slot);
        }
        Ok(frames)
    }
}
