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

/// A read's outcome, once the caller reading has it: its frames, or that it failed (every
/// caller waiting meanwhile is answered by it, not by reading again one after another).
type Slot = Arc<OnceCell<Result<SharedFrames, SharedFailure>>>;

/// A shared read that failed; the caller that read it has the error itself.
#[derive(Debug, Clone, Copy)]
struct SharedFailure;

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
                .weigher(|_, slot: &Slot| match slot.get() {
                    Some(Ok(frames)) => weight(frames),
                    _ => 1,
                })
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
    /// later ones within [`KEPT_FOR`] take them as they are. A read that fails answers every
    /// caller waiting for it with a failure and is not kept (the next caller reads again); one
    /// whose caller goes away hands the read to a waiting caller.
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
        let mut own_error = None;
        let outcome = slot
            .get_or_init(|| async {
                read().await.map(SharedFrames::from).map_err(|error| {
                    own_error = Some(error);
                    SharedFailure
                })
            })
            .await
            .clone();
        if let Some(error) = own_error {
            self.slots.invalidate(&key);
            return Err(error);
        }
        match outcome {
            Ok(frames) => {
                // Again, now that it holds frames: weighed by them, and kept for [`KEPT_FOR`]
                // from now (an insert by every caller; the same slot).
                self.slots.insert(key, slot);
                Ok(frames)
            }
            Err(SharedFailure) => Err(AgentError::Internal(anyhow::anyhow!(
                "the shared read of the live tail failed"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A store that is down answers every socket waiting on one read with that read's failure,
    /// not with a read of its own one after another; the next caller tries again.
    #[tokio::test]
    async fn a_failed_read_answers_every_waiting_caller_and_is_not_kept() {
        let reads = SharedStreamReads::default();
        let attempts = Arc::new(AtomicUsize::new(0));
        let failing = || {
            let attempts = attempts.clone();
            move || async move {
                attempts.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                Err::<Vec<String>, _>(AgentError::SessionNotFound)
            }
        };
        let (a, b, c, d) = tokio::join!(
            reads.frames("s", 0, 9, failing()),
            reads.frames("s", 0, 9, failing()),
            reads.frames("s", 0, 9, failing()),
            reads.frames("s", 0, 9, failing()),
        );
        let answers = [a, b, c, d];
        assert_eq!(attempts.load(Ordering::SeqCst), 1, "one read for the four");
        assert_eq!(answers.iter().filter(|a| a.is_err()).count(), 4);
        assert!(
            answers.iter().any(|a| matches!(a, Err(AgentError::SessionNotFound))),
            "the reader has its own error"
        );
        let again = reads
            .frames("s", 0, 9, || async { Ok(vec!["frame".to_owned()]) })
            .await
            .unwrap();
        assert_eq!(&*again, ["frame".to_owned()], "the failure was not kept");
    }
}
