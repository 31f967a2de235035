//! The single-node event bus: one broadcast channel per topic with live subscribers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_application::ports::agent::{EventBus, LiveEvent, Published};
use tokio::sync::broadcast;
use tokio::time::Instant;

/// Events a slow subscriber may fall behind before it is told it lagged (a socket then resumes
/// from the store with `fromSeq`; a long-poll drains). A channel allocates all its slots up front
/// and every waiting `svc_consume` or subscribed card holds one per session, so it stays small;
/// a slot is one pointer (`Published`).
const CHANNEL_CAPACITY: usize = 64;

/// Channels kept before the first sweep of ones nobody listens to any more.
const FIRST_SWEEP_AT: usize = 1024;

/// `MissedEvents` reaches every topic at most once per this interval: each delivery makes every
/// card of the replica reconnect, and a broker that drops messages under load says so once per
/// message. One heard within the interval is delivered at its end, so none goes unheard.
const MISSED_EVENTS_PACE: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct InProcessEventBus {
    channels: Arc<Mutex<Channels>>,
    missed: Arc<Mutex<MissedPace>>,
}

/// When `MissedEvents` last reached every topic, and whether a delivery is due at the end of the
/// interval.
#[derive(Default)]
struct MissedPace {
    last: Option<Instant>,
    due: bool,
}

#[derive(Default)]
struct Channels {
    by_topic: HashMap<String, broadcast::Sender<Published>>,
    /// The next sweep runs when this many channels exist (twice what the last one kept).
    sweep_at: usize,
}

impl Channels {
    fn deliver(&mut self, topic: &str, event: Published) {
        // Nobody listens any more: forget the channel.
        if let Some(sender) = self.by_topic.get(topic)
            && sender.send(event).is_err()
        {
            self.by_topic.remove(topic);
        }
    }

    /// Delivers `event` on every channel, forgetting those nobody listens to any more.
    fn deliver_everywhere(&mut self, event: &Published) {
        self.by_topic.retain(|_, sender| sender.send(event.clone()).is_ok());
    }

    /// Drops channels whose subscribers all left without a publish to notice it (a long-poll that
    /// timed out, a card that closed): amortised over subscribes, so the map stays as large as
    /// twice the topics listened to.
    fn sweep_if_due(&mut self) {
        if self.by_topic.len() < self.sweep_at.max(FIRST_SWEEP_AT) {
            return;
        }
        self.by_topic.retain(|_, sender| sender.receiver_count() > 0);
        self.sweep_at = self.by_topic.len() * 2;
    }
}

impl InProcessEventBus {
    /// Topics with a channel (for tests of the cleanup).
    pub fn channel_count(&self) -> usize {
        self.channels.lock().expect("bus lock").by_topic.len()
    }

    /// `event` on every channel now, or at the end of [`MISSED_EVENTS_PACE`] after the last
    /// such delivery (once, however many were published meanwhile).
    fn publish_everywhere(&self, event: LiveEvent) {
        let now = Instant::now();
        let mut pace = self.missed.lock().expect("bus pace lock");
        let next = pace.last.map(|last| last + MISSED_EVENTS_PACE);
        if pace.due {
            // A delivery is due at the end of the interval; it covers this one.
            return;
        }
        match (next, tokio::runtime::Handle::try_current()) {
            (Some(next), Ok(runtime)) if now < next => {
                pace.due = true;
                let (channels, missed) = (self.channels.clone(), self.missed.clone());
                runtime.spawn(async move {
                    tokio::time::sleep_until(next).await;
                    let mut pace = missed.lock().expect("bus pace lock");
                    (pace.last, pace.due) = (Some(Instant::now()), false);
                    drop(pace);
                    let published = Published::new(event);
                    channels.lock().expect("bus lock").deliver_everywhere(&published);
                });
            }
            // The first, one past the interval, or no runtime to wait on: now.
            _ => {
                pace.last = Some(now);
                drop(pace);
                let published = Published::new(event);
                self.channels.lock().expect("bus lock").deliver_everywhere(&published);
            }
        }
    }
}

impl EventBus for InProcessEventBus {
    fn publish(&self, event: LiveEvent) {
        if event.heard_on_every_topic() {
            self.publish_everywhere(event);
            return;
        }
        let topic = event.topic();
        let also = event.also_heard_on();
        let published = Published::new(event);
        let mut channels = self.channels.lock().expect("bus lock");
        for other in also {
            channels.deliver(other, published.clone());
        }
        channels.deliver(&topic, published);
    }

    fn subscribe(&self, topic: &str) -> broadcast::Receiver<Published> {
        let mut channels = self.channels.lock().expect("bus lock");
        channels.sweep_if_due();
        match channels.by_topic.get(topic) {
            Some(sender) => sender.subscribe(),
            None => {
                let (sender, receiver) = broadcast::channel(CHANNEL_CAPACITY);
                channels.by_topic.insert(topic.to_owned(), sender);
                receiver
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(session_id: &str) -> LiveEvent {
        LiveEvent::ActionStored {
            session_id: session_id.to_owned(),
        }
    }

    #[tokio::test]
    async fn every_subscriber_gets_the_same_shared_event() {
        let bus = InProcessEventBus::default();
        let (mut a, mut b) = (bus.subscribe("s"), bus.subscribe("s"));
        bus.publish(stored("s"));
        let (a, b) = (a.recv().await.unwrap(), b.recv().await.unwrap());
        assert_eq!(a.event(), &stored("s"));
        let first = a.rendered(|_| Some(std::sync::Arc::<str>::from("frame"))).unwrap();
        let second = b
            .rendered::<std::sync::Arc<str>>(|_| panic!("rendered once for every subscriber"))
            .unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &second));
    }

    #[tokio::test]
    async fn channels_nobody_listens_to_are_swept() {
        let bus = InProcessEventBus::default();
        let kept = bus.subscribe("kept");
        for i in 0..FIRST_SWEEP_AT * 3 {
            drop(bus.subscribe(&format!("gone-{i}")));
        }
        assert!(
            bus.channel_count() <= FIRST_SWEEP_AT,
            "idle channels are dropped: {} left",
            bus.channel_count()
        );
        bus.publish(stored("kept"));
        let mut kept = kept;
        assert_eq!(kept.recv().await.unwrap().event(), &stored("kept"));
    }

    #[tokio::test]
    async fn missed_events_reach_every_topic_once_and_forget_the_deserted_ones() {
        use svc_application::ports::agent::KEY_REVOCATIONS_TOPIC;
        let bus = InProcessEventBus::default();
        let mut session = bus.subscribe("s");
        let mut keys = bus.subscribe(KEY_REVOCATIONS_TOPIC);
        drop(bus.subscribe("deserted"));
        bus.publish(LiveEvent::MissedEvents);
        for heard in [&mut session, &mut keys] {
            assert_eq!(heard.recv().await.unwrap().event(), &LiveEvent::MissedEvents);
            assert!(heard.try_recv().is_err(), "heard once");
        }
        assert_eq!(bus.channel_count(), 2, "the deserted topic's channel is gone");
    }

    #[tokio::test]
    async fn missed_events_heard_together_reach_every_topic_once_a_second() {
        let bus = InProcessEventBus::default();
        let mut heard = bus.subscribe("s");
        bus.publish(LiveEvent::MissedEvents);
        assert_eq!(
            heard.try_recv().unwrap().event(),
            &LiveEvent::MissedEvents,
            "the first at once"
        );
        let started = Instant::now();
        for _ in 0..5 {
            bus.publish(LiveEvent::MissedEvents);
        }
        assert!(heard.try_recv().is_err(), "the others wait for the end of the second");
        let trailing = tokio::time::timeout(MISSED_EVENTS_PACE * 10, heard.recv()).await;
        assert_eq!(trailing.unwrap().unwrap().event(), &LiveEvent::MissedEvents);
        assert!(
            started.elapsed() >= MISSED_EVENTS_PACE / 2,
            "delivered at the end of the interval, not with the first"
        );
        tokio::time::sleep(MISSED_EVENTS_PACE / 2).await;
        assert!(heard.try_recv().is_err(), "five heard meanwhile are delivered once");
    }

    #[tokio::test]
    async fn a_subscriber_more_than_the_capacity_behind_is_told_it_lagged() {
        let bus = InProcessEventBus::default();
        let mut slow = bus.subscribe("s");
        for _ in 0..CHANNEL_CAPACITY + 1 {
            bus.publish(stored("s"));
        }
        assert!(matches!(slow.recv().await, Err(broadcast::error::RecvError::Lagged(1))));
    }
}
