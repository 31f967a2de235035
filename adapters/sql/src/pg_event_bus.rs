//! The scale-out event bus: PostgreSQL LISTEN/NOTIFY between replicas.
//!
//! `publish` delivers to this replica's subscribers at once (through the in-process bus it wraps)
//! and sends a NOTIFY on the `svc_live` channel; every other replica's listener re-publishes the
//! event to its own subscribers. A notification payload is limited to 8000 bytes, so a large event
//! (big props) is written to the `live_messages` table and the NOTIFY carries its id. Each
//! replica ignores its own notifications by an origin id drawn at start-up.
//!
//! The listener holds one pooled connection for as long as it runs, so the pool cannot close
//! before it stops: shutdown calls [`PgBusTasks::stop`] first.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::sqlx::{self, PgPool};
use serde_json::{Value, json};
use svc_application::ports::Clock;
use svc_application::ports::agent::{EventBus, LiveEvent, Published};
use svc_application::ports::bus_message::BusMessage;
use svc_application::ports::bus_outbox::{OUTBOX_MAX_BYTES, Outbox, OutboxQueue, outbox};
use tokio::sync::broadcast;

const CHANNEL: &str = "svc_live";
/// Larger payloads travel through `live_messages`.
const INLINE_LIMIT: usize = 7000;
/// Spilled messages older than this are deleted.
const SPILL_RETENTION_SECONDS: i64 = 3600;

pub struct PgEventBus {
    local: Arc<dyn EventBus>,
    outbox: Outbox,
}

/// The bus's background tasks, stopped at shutdown so the listener's connection goes back and
/// the pool can close.
pub struct PgBusTasks {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl PgBusTasks {
    /// Stops sending and listening; events published afterwards stay on this replica.
    pub async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

impl PgEventBus {
    /// Starts the sender and the listener tasks; `local` is this replica's in-process bus and
    /// `clock` stamps and expires spilled messages.
    pub async fn start(
        db: &DatabaseConnection,
        local: Arc<dyn EventBus>,
        origin: String,
        clock: Arc<dyn Clock>,
    ) -> Result<(Self, PgBusTasks), sqlx::Error> {
        let pool = db.get_postgres_connection_pool().clone();
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(CHANNEL).await?;
        let (outbox, queue) = outbox(&origin, OUTBOX_MAX_BYTES);
        let tasks = vec![
            tokio::spawn(send_loop(pool.clone(), queue, origin.clone(), clock)),
            tokio::spawn(listen_loop(pool, listener, local.clone(), origin)),
        ];
        Ok((Self { local, outbox }, PgBusTasks { tasks }))
    }
}

impl EventBus for PgEventBus {
    fn publish(&self, event: LiveEvent) {
        self.local.publish(event.clone());
        // The sender task owns ordering: notifications leave in publish order.
        self.outbox.push(event);
    }

    fn subscribe(&self, topic: &str) -> broadcast::Receiver<Published> {
        self.local.subscribe(topic)
    }
}

async fn send_loop(pool: PgPool, mut queue: OutboxQueue, origin: String, clock: Arc<dyn Clock>) {
    let mut last_cleanup = clock.now();
    while let Some(body) = queue.next().await {
        let payload = if body.len() <= INLINE_LIMIT {
            body
        } else {
            match spill(&pool, &body, clock.as_ref()).await {
                Ok(id) => json!({ "origin": origin, "ref": id }).to_string(),
                Err(e) => {
                    tracing::error!(error = %e, "could not spill a live event");
                    continue;
                }
            }
        };
        if let Err(e) = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(&payload)
            .execute(&pool)
            .await
        {
            tracing::error!(error = %e, "NOTIFY failed; other replicas miss one live event");
        }
        let now = clock.now();
        if (now - last_cleanup).num_seconds() > 60 {
            last_cleanup = now;
            let cutoff = now - chrono::Duration::seconds(SPILL_RETENTION_SECONDS);
            let _ = sqlx::query("DELETE FROM live_messages WHERE created_at < $1")
                .bind(cutoff)
                .execute(&pool)
                .await;
        }
    }
}

async fn spill(pool: &PgPool, body: &str, clock: &dyn Clock) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO live_messages (body, created_at) VALUES ($1, $2) RETURNING id")
        .bind(body)
        .bind(clock.now())
        .fetch_one(pool)
        .await
}

async fn listen_loop(pool: PgPool, mut listener: PgListener, local: Arc<dyn EventBus>, origin: String) {
    loop {
        // A lost connection is re-established (and LISTENs again) before `try_recv` answers
        // `None`: what other replicas announced in between is lost, so this replica's caches
        // that follow announcements start over.
        let notification = match listener.try_recv().await {
            Ok(Some(n)) => n,
            Ok(None) => {
                tracing::warn!("live listener reconnected; events other replicas sent meanwhile are lost");
                local.publish(LiveEvent::MissedEvents);
                continue;
            }
            Err(e) if pool.is_closed() => {
                tracing::debug!(error = %e, "live listener stops: the pool is closed");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "live listener error; retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        let Some(message) = read(&pool, notification.payload(), &origin).await else {
            continue;
        };
        local.publish(message.event.into());
    }
}

/// Another replica's message from a notification: inline, or by its `ref` in `live_messages`.
/// `None` for this replica's own, a spilled row gone, or anything that is not a message.
async fn read(pool: &PgPool, payload: &str, origin: &str) -> Option<BusMessage> {
    svc_domain::json_marker::refuse_raw_value_marker(payload.as_bytes()).ok()?;
    let envelope: Value = serde_json::from_str(payload).ok()?;
    if envelope["origin"] == origin {
        return None;
    }
    let Some(id) = envelope["ref"].as_i64() else {
        return BusMessage::decode(payload.as_bytes());
    };
    let body: String = sqlx::query_scalar("SELECT body FROM live_messages WHERE id = $1")
        .bind(id)
        .fetch_one(pool)
        .await
        .ok()?;
    BusMessage::decode(body.as_bytes())
}
