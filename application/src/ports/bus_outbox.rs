//! What a scale-out bus (PostgreSQL NOTIFY, NATS) queues for its sender task: encoded messages,
//! bounded by bytes. `publish` cannot wait, and the sender may fall behind (a slow NOTIFY, a
//! burst of props updates), so the queue once grew with whatever was published. Past the bound a
//! bulky event (a `data` frame, a props update, or the marker of a large one) is dropped and a
//! "missed events" message takes its place (one, until the sender reaches it), on which other
//! replicas' caches that follow the bus start over; the dropped frame is missed by other
//! replicas' sockets as one lost to a failed NOTIFY is (it stays in the session's store). Small
//! control events (a stored gesture, a blueprint change, a drain, a render) give way only at
//! twice the bound, a key revocation never.

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
    sender: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
}

/// The sending side, owned by the bus's sender task.
pub struct OutboxQueue {
    receiver: mpsc::UnboundedReceiver<Queued>,
    shared: Arc<Shared>,
}

enum Queued {
    Message(String),
    /// In place of what was dropped.
    Missed,
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
        let shared = &self.shared;
        // Bulky events give way at the bound, small control events at twice it (a sender stuck
        // for good must not grow the queue without end either), a key revocation never: an
        // open socket under the key closes only on it.
        let ceiling = match event {
            LiveEvent::Data(_)
            | LiveEvent::DataStored { .. }
            | LiveEvent::PropsUpdate { .. }
            | LiveEvent::PropsStored { .. } => shared.max_bytes,
            LiveEvent::KeyRevoked { .. } => usize::MAX,
            _ => shared.max_bytes.saturating_mul(2),
        };
        let message = BusMessage::new(&self.origin, event).encode();
        let bytes = message.len();
        if shared.queued_bytes.fetch_add(bytes, Ordering::AcqRel) + bytes > ceiling {
            shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            if !shared.missed_queued.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    max_bytes = shared.max_bytes,
                    "the live bus is behind: events are dropped, other replicas are told they missed some"
                );
                let _ = self.sender.send(Queued::Missed);
            }
            return false;
        }
        if self.sender.send(Queued::Message(message)).is_err() {
            shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            return false;
        }
        true
    }
}

impl OutboxQueue {
    /// The next message to send, in publish order; `None` once every [`Outbox`] is gone.
    pub async fn next(&mut self) -> Option<String> {
        let shared = &self.shared;
        match self.receiver.recv().await? {
            Queued::Missed => {
                shared.missed_queued.store(false, Ordering::Release);
                Some(shared.missed.clone())
            }
            Queued::Message(message) => {
                shared.queued_bytes.fetch_sub(message.len(), Ordering::AcqRel);
                Some(message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::agent::StreamEnvelope;
    use crate::ports::bus_message::WireEvent;

    fn data(text: &str) -> LiveEvent {
        LiveEvent::Data(StreamEnvelope {
            session_id: "s".into(),
            channel: "log".into(),
            seq: 1,
            mode: "append".into(),
            payload: serde_json::json!(text),
            complete: false,
            timestamp: chrono::DateTime::UNIX_EPOCH,
        })
    }

    fn revoked(key: &str) -> LiveEvent {
        LiveEvent::KeyRevoked { key_id: key.into() }
    }

    fn is_missed(message: &str) -> bool {
        matches!(BusMessage::decode(message.as_bytes()).unwrap().event, WireEvent::Missed)
    }

    #[tokio::test]
    async fn past_its_bytes_a_bulky_event_is_dropped_and_one_missed_marker_takes_its_place() {
        let one = BusMessage::new("r1", data("d1")).encode().len();
        let (outbox, mut queue) = outbox("r1", one * 2);
        assert!(outbox.push(data("d1")));
        assert!(outbox.push(data("d2")));
        assert!(!outbox.push(data("d3")), "over the bound");
        assert!(!outbox.push(data("d4")), "still over it: no second marker");
        assert!(
            outbox.push(revoked("k1")),
            "a control event is not dropped at the bound"
        );

        let first = queue.next().await.unwrap();
        assert!(first.contains("d1") && !is_missed(&first));
        assert!(queue.next().await.unwrap().contains("d2"));
        assert!(is_missed(&queue.next().await.unwrap()), "the marker where d3 was");
        assert!(queue.next().await.unwrap().contains("k1"));

        // Taken, the room is back and a later drop queues a marker again.
        assert!(outbox.push(data("d5")));
        assert!(outbox.push(data("d6")));
        assert!(!outbox.push(data("d7")));
        assert!(queue.next().await.unwrap().contains("d5"));
        assert!(queue.next().await.unwrap().contains("d6"));
        assert!(is_missed(&queue.next().await.unwrap()));
        drop(outbox);
        assert!(queue.next().await.is_none());
    }

    #[tokio::test]
    async fn control_events_give_way_at_twice_the_bound_and_a_revocation_never() {
        let stored = || LiveEvent::ActionStored { session_id: "s".into() };
        let one = BusMessage::new("r1", stored()).encode().len();
        let (outbox, _queue) = outbox("r1", one);
        assert!(outbox.push(stored()));
        assert!(outbox.push(stored()), "within twice the bound");
        assert!(!outbox.push(stored()), "past it");
        for n in 0..10 {
            assert!(outbox.push(revoked(&format!("k{n}"))), "a revocation is always queued");
        }
    }

    #[tokio::test]
    async fn a_missed_events_message_published_through_the_outbox_is_an_ordinary_message() {
        // Room for exactly one data message once the published marker's bytes are given back.
        let (outbox, mut queue) = outbox("r1", BusMessage::new("r1", data("d1")).encode().len());
        assert!(outbox.push(LiveEvent::MissedEvents));
        assert!(is_missed(&queue.next().await.unwrap()));
        assert!(outbox.push(data("d1")), "its bytes were given back");
        assert!(queue.next().await.unwrap().contains("d1"));
    }
}
