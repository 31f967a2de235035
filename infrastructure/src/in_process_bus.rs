//! The single-node event bus: one broadcast channel per session with live subscribers.

use std::collections::HashMap;
use std::sync::Mutex;

use svc_application::ports::agent::{EventBus, KEY_REVOCATIONS_TOPIC, LiveEvent};
use tokio::sync::broadcast;

/// Frames a slow subscriber may fall behind before it is told it lagged.
const CHANNEL_CAPACITY: usize = 256;

#[derive(Default)]
pub struct InProcessEventBus {
    channels: Mutex<HashMap<String, broadcast::Sender<LiveEvent>>>,
}

impl EventBus for InProcessEventBus {
    fn publish(&self, event: LiveEvent) {
        let mut channels = self.channels.lock().expect("bus lock");
        if matches!(event, LiveEvent::KeyRevoked { .. }) {
            deliver(&mut channels, KEY_REVOCATIONS_TOPIC.to_owned(), event.clone());
        }
        deliver(&mut channels, event.topic(), event);
    }

    fn subscribe(&self, session_id: &str) -> broadcast::Receiver<LiveEvent> {
        let mut channels = self.channels.lock().expect("bus lock");
        channels
            .entry(session_id.to_owned())
            .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
            .subscribe()
    }
}

fn deliver(channels: &mut HashMap<String, broadcast::Sender<LiveEvent>>, topic: String, event: LiveEvent) {
    // Nobody listens any more: forget the channel.
    if let Some(sender) = channels.get(&topic)
        && sender.send(event).is_err()
    {
        channels.remove(&topic);
    }
}
