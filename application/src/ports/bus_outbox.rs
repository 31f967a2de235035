//! What a scale-out bus (PostgreSQL NOTIFY, NATS) queues for its sender task: encoded messages,
//! bounded by bytes. `publish` cannot wait, and the sender may fall behind (a slow NOTIFY, a
//! burst of large props updates), so the queue once grew with whatever was published. Past the
//! bound a message is dropped and a "missed events" message takes its place (one, until the
//! sender reaches it): other replicas' caches that follow the bus (keys, blueprints) start over
//! on it, so a dropped key revocation or blueprint change is not missed there. A dropped live
//! frame is missed by other replicas' sockets as one lost to a failed NOTIFY is; it stays in the
//! session's store.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;

use super::agent::LiveEvent;
use super::bus_message::BusMessage;

/// Bytes of encoded messages a replica holds for its bus at most.
pub const OUTBOX_MAX_BYTES: usize = 64 * 1024 * 1024;

/// The publishing side, kept by the bus.
pub struct Outbox {
    origin: String,
    sender: mpsc::UnboundedSender<String>,
    shared: Arc<Shared>,
}

/// The sending side, owned by the bus's sender task.
pub struct OutboxQueue {
    receiver: mpsc::UnboundedReceiver<String>,
    shared: Arc<Shared>,
}

struct Shared {
    max_bytes: usize,
    queued_bytes: AtomicUsize,
    /// A "missed events" message is queued and not yet taken.
    missed_queued: AtomicBool,
    missed: String,
}

/// An outbox for the replica `origin`, holding at most `max_bytes` of messages.
pub fn outbox(origin: &str, max_bytes: usize) -> (Outbox, OutboxQueue) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        max_bytes,
        queued_bytes: AtomicUsize::new(0),
        missed_queued: AtomicBool::new(false),
        missed: BusMessage::new(origin, LiveEvent::MissedEvents).encode(),
    });
    (
        Outbox {
            origin: origin.to_owned(),
            sender,
            shared: shared.clone(),
        },
        OutboxQueue { receiver, shared },
    )
}

impl Outbox {
    /// Queues `event` encoded; false when it was dropped for the bound (the sender stopped, or
    /// the queue is full).
    pub fn push(&self, event: LiveEvent) -> bool {
        let message = BusMessage::new(&self.origin, event).encode();
        let bytes = message.len();
        let shared = &self.shared;
        if shared.queued_bytes.fetch_add(bytes, Ordering::AcqRel) + bytes > shared.max_bytes {
            shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            if !shared.missed_queued.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    max_bytes = shared.max_bytes,
                    "the live bus is behind: events are dropped, other replicas are told they missed some"
                );
                let _ = self.sender.send(shared.missed.clone());
            }
            return false;
        }
        if self.sender.send(message).is_err() {
            shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            return false;
        }
        true
    }
}

impl OutboxQueue {
    /// The next message to send, in publish order; `None` once every [`Outbox`] is gone.
    pub async fn next(&mut self) -> Option<String> {
        let message = self.receiver.recv().await?;
        let shared = &self.shared;
        if message == shared.missed {
            shared.missed_queued.store(false, Ordering::Release);
        } else {
            shared.queued_bytes.fetch_sub(message.len(), Ordering::AcqRel);
        }
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::bus_message::WireEvent;

    fn revoked(hash: &str) -> LiveEvent {
        LiveEvent::KeyRevoked { key_id: hash.into() }
    }

    fn is_missed(message: &str) -> bool {
        matches!(BusMessage::decode(message.as_bytes()).unwrap().event, WireEvent::Missed)
    }

    #[tokio::test]
    async fn past_its_bytes_a_message_is_dropped_and_one_missed_marker_takes_its_place() {
        let one = BusMessage::new("r1", revoked("k1")).encode().len();
        let (outbox, mut queue) = outbox("r1", one * 2);
        assert!(outbox.push(revoked("k1")));
        assert!(outbox.push(revoked("k2")));
        assert!(!outbox.push(revoked("k3")), "over the bound");
        assert!(!outbox.push(revoked("k4")), "still over it: no second marker");

        let first = queue.next().await.unwrap();
        assert!(first.contains("k1") && !is_missed(&first));
        assert!(queue.next().await.unwrap().contains("k2"));
        assert!(is_missed(&queue.next().await.unwrap()), "the marker where k3 was");

        // Taken, the room is back and a later drop queues a marker again.
        assert!(outbox.push(revoked("k5")));
        assert!(outbox.push(revoked("k6")));
        assert!(!outbox.push(revoked("k7")));
        assert!(queue.next().await.unwrap().contains("k5"));
        assert!(queue.next().await.unwrap().contains("k6"));
        assert!(is_missed(&queue.next().await.unwrap()));
        drop(outbox);
        assert_eq!(queue.next().await, None);
    }
}
