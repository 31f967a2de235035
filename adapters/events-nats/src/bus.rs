//! `NatsEventBus`: the in-process bus of this replica plus one NATS subject shared by all.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use svc_application::ports::agent::{EventBus, LiveEvent, Published};
use svc_application::ports::bus_message::BusMessage;
use svc_application::ports::bus_outbox::{OUTBOX_MAX_BYTES, Outbox, OutboxQueue, outbox};
use tokio::sync::broadcast;

/// How long start-up waits for the broker before it gives up with a clear error.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum NatsStartError {
    #[error("cannot reach NATS at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("cannot subscribe on NATS: {0}")]
    Subscribe(String),
}

pub struct NatsEventBus {
    local: Arc<dyn EventBus>,
    outbox: Outbox,
}

/// The sender and listener tasks, stopped at shutdown.
pub struct NatsBusTasks {
    client: async_nats::Client,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl NatsBusTasks {
    /// Sends what is queued, then stops; events published afterwards stay on this replica.
    pub async fn stop(self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.client.flush()).await;
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

impl NatsEventBus {
    /// Connects to `url` and starts the sender and listener on `subject` (shared by the
    /// deployment's replicas); `local` is this replica's in-process bus and `origin` its id.
    pub async fn start(
        url: &str,
        subject: &str,
        local: Arc<dyn EventBus>,
        origin: String,
    ) -> Result<(Self, NatsBusTasks), NatsStartError> {
        let connect_error = |reason: String| NatsStartError::Connect {
            url: url.to_owned(),
            reason,
        };
        // Without `retry_on_initial_connect` an unreachable broker fails at once.
        let missed_by = local.clone();
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(CONNECT_TIMEOUT)
            // After a reconnect (the client subscribes again by itself), or when the client
            // dropped messages for a slow subscriber, what other replicas sent is lost: this
            // replica's caches that follow announcements start over.
            .event_callback(move |event| {
                let local = missed_by.clone();
                async move {
                    if matches!(event, async_nats::Event::Connected | async_nats::Event::SlowConsumer(_)) {
                        local.publish(LiveEvent::MissedEvents);
                    }
                }
            })
            .name("svc")
            .connect(url)
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        let subscription = client
            .subscribe(subject.to_owned())
            .await
            .map_err(|e| NatsStartError::Subscribe(e.to_string()))?;
        // The subscription is registered on the server before anything is published.
        client
            .flush()
            .await
            .map_err(|e| NatsStartError::Subscribe(e.to_string()))?;
        let (outbox, queue) = outbox(&origin, OUTBOX_MAX_BYTES);
        let tasks = vec![
            tokio::spawn(send_loop(client.clone(), subject.to_owned(), queue)),
            tokio::spawn(listen_loop(subscription, local.clone(), origin)),
        ];
        Ok((Self { local, outbox }, NatsBusTasks { client, tasks }))
    }
}

impl EventBus for NatsEventBus {
    fn publish(&self, event: LiveEvent) {
        self.local.publish(event.clone());
        // The sender task owns ordering: messages leave in publish order.
        self.outbox.push(event);
    }

    fn subscribe(&self, topic: &str) -> broadcast::Receiver<Published> {
        self.local.subscribe(topic)
    }
}

async fn send_loop(client: async_nats::Client, subject: String, mut queue: OutboxQueue) {
    while let Some(body) = queue.next().await {
        // A message over the server's `max_payload` (1 MiB by default) is refused by the client.
        // Live events stay far below it (a payload over `LIVE_EVENT_INLINE_BYTES` travels as a
        // marker and is read from the store), so this only guards a broker configured below that.
        let max = client.server_info().max_payload;
        if body.len() > max {
            tracing::error!(
                bytes = body.len(),
                max_payload = max,
                "live event larger than the NATS max_payload; other replicas miss it"
            );
            continue;
        }
        if let Err(e) = client.publish(subject.clone(), body.into()).await {
            tracing::error!(error = %e, "NATS publish failed; other replicas miss one live event");
        }
    }
}

async fn listen_loop(mut subscription: async_nats::Subscriber, local: Arc<dyn EventBus>, origin: String) {
    // The client reconnects by itself and resubscribes; the stream ends only when it is closed.
    while let Some(delivered) = subscription.next().await {
        let Some(message) = BusMessage::decode(&delivered.payload) else {
            tracing::warn!("a message on the live subject is not a live event; ignored");
            continue;
        };
        if message.origin == origin {
            continue;
        }
        local.publish(message.event.into());
    }
    tracing::debug!("NATS live listener stops: the subscription ended");
}
