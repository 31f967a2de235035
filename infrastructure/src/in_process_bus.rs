//! The single-node event bus: one broadcast channel per session with live subscribers.

use std::collections::HashMap;
use std::sync::Mutex;

use svc_application::ports::agent::{EventBus, LiveEvent};
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
        let session = event.topic();
        // Nobody listens any more: forget the channel.
        if let Some(sender) = channels.get(&session)
            && sender.send(event).is_err()
        {
            channels.remove(&session);
        }
    }

    fn subscribe(&self, session_id: &str) -> broadcast::Receiver<LiveEvent> {
        let mut channels = self.channels.lock().expect("bus lock");
        channels
            .entry(session_id.to_owned())
            .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
            .subscribe()
    }
}
