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

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::sqlx::{self, PgPool};
use serde_json::{Value, json};
use svc_application::ports::agent::{EventBus, LiveEvent, StreamEnvelope};
use tokio::sync::{broadcast, mpsc};

const CHANNEL: &str = "svc_live";
/// Larger payloads travel through `live_messages`.
const INLINE_LIMIT: usize = 7000;
/// Spilled messages older than this are deleted.
const SPILL_RETENTION_SECONDS: i64 = 3600;

pub struct PgEventBus {
    local: Arc<dyn EventBus>,
    outbox: mpsc::UnboundedSender<LiveEvent>,
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
    /// Starts the sender and the listener tasks; `local` is this replica's in-process bus.
    pub async fn start(
        db: &DatabaseConnection,
        local: Arc<dyn EventBus>,
        origin: String,
    ) -> Result<(Self, PgBusTasks), sqlx::Error> {
        let pool = db.get_postgres_connection_pool().clone();
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(CHANNEL).await?;
        let (outbox, queue) = mpsc::unbounded_channel();
        let tasks = vec![
            tokio::spawn(send_loop(pool.clone(), queue, origin.clone())),
            tokio::spawn(listen_loop(pool, listener, local.clone(), origin)),
        ];
        Ok((Self { local, outbox }, PgBusTasks { tasks }))
    }
}

impl EventBus for PgEventBus {
    fn publish(&self, event: LiveEvent) {
        self.local.publish(event.clone());
        // The sender task owns ordering: notifications leave in publish order.
        let _ = self.outbox.send(event);
    }

    fn subscribe(&self, topic: &str) -> broadcast::Receiver<LiveEvent> {
        self.local.subscribe(topic)
    }
}

async fn send_loop(pool: PgPool, mut queue: mpsc::UnboundedReceiver<LiveEvent>, origin: String) {
    let mut last_cleanup = Utc::now();
    while let Some(event) = queue.recv().await {
        let body = json!({ "origin": origin, "event": encode(&event) }).to_string();
        let payload = if body.len() <= INLINE_LIMIT {
            body
        } else {
            match spill(&pool, &body).await {
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
        if (Utc::now() - last_cleanup).num_seconds() > 60 {
            last_cleanup = Utc::now();
            let cutoff = Utc::now() - chrono::Duration::seconds(SPILL_RETENTION_SECONDS);
            let _ = sqlx::query("DELETE FROM live_messages WHERE created_at < $1")
                .bind(cutoff)
                .execute(&pool)
                .await;
        }
    }
}

async fn spill(pool: &PgPool, body: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO live_messages (body, created_at) VALUES ($1, $2) RETURNING id")
        .bind(body)
        .bind(Utc::now())
        .fetch_one(pool)
        .await
}

async fn listen_loop(pool: PgPool, mut listener: PgListener, local: Arc<dyn EventBus>, origin: String) {
    loop {
        // `recv` reconnects by itself after a lost connection.
        let notification = match listener.recv().await {
            Ok(n) => n,
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
        let Ok(mut message) = serde_json::from_str::<Value>(notification.payload()) else {
            continue;
        };
        if message["origin"] == origin.as_str() {
            continue;
        }
        if let Some(id) = message["ref"].as_i64() {
            let body: Result<String, _> = sqlx::query_scalar("SELECT body FROM live_messages WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await;
            match body.ok().and_then(|b| serde_json::from_str(&b).ok()) {
                Some(full) => message = full,
                None => continue,
            }
        }
        if let Some(event) = decode(&message["event"]) {
            local.publish(event);
        }
    }
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339()
}

fn time(v: &Value) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(v.as_str()?)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn encode(event: &LiveEvent) -> Value {
    match event {
        LiveEvent::PropsUpdate {
            session_id,
            props,
            epoch,
        } => json!({ "k": "props", "s": session_id, "props": props, "epoch": epoch }),
        LiveEvent::Data(e) => json!({
            "k": "data", "s": e.session_id, "channel": e.channel, "seq": e.seq, "mode": e.mode,
            "payload": e.payload, "complete": e.complete, "timestamp": iso(e.timestamp),
        }),
        LiveEvent::ActionStored { session_id } => json!({ "k": "action", "s": session_id }),
        LiveEvent::DrainAck { session_id, action_ids } => json!({ "k": "drain", "s": session_id, "ids": action_ids }),
        LiveEvent::Render {
            topic,
            session_id,
            created_at,
        } => {
            json!({ "k": "render", "topic": topic, "s": session_id, "at": iso(*created_at) })
        }
        LiveEvent::KeyRevoked { key_id } => json!({ "k": "revoked", "key": key_id }),
    }
}

fn decode(v: &Value) -> Option<LiveEvent> {
    if v["k"] == "revoked" {
        return Some(LiveEvent::KeyRevoked {
            key_id: v["key"].as_str()?.to_owned(),
        });
    }
    let session_id = v["s"].as_str()?.to_owned();
    Some(match v["k"].as_str()? {
        "props" => LiveEvent::PropsUpdate {
            session_id,
            props: v["props"].clone(),
            epoch: u32::try_from(v["epoch"].as_u64()?).ok()?,
        },
        "data" => LiveEvent::Data(StreamEnvelope {
            session_id,
            channel: v["channel"].as_str()?.to_owned(),
            seq: v["seq"].as_i64()?,
            mode: v["mode"].as_str()?.to_owned(),
            payload: v["payload"].clone(),
            complete: v["complete"].as_bool()?,
            timestamp: time(&v["timestamp"])?,
        }),
        "action" => LiveEvent::ActionStored { session_id },
        "drain" => LiveEvent::DrainAck {
            session_id,
            action_ids: v["ids"]
                .as_array()?
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
        },
        "render" => LiveEvent::Render {
            topic: v["topic"].as_str()?.to_owned(),
            session_id,
            created_at: time(&v["at"])?,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_encoding() {
        let at = DateTime::parse_from_rfc3339("2026-11-25T10:00:00.123Z")
            .unwrap()
            .with_timezone(&Utc);
        let events = [
            LiveEvent::PropsUpdate {
                session_id: "s".into(),
                props: json!({ "a": [1, 2] }),
                epoch: 3,
            },
            LiveEvent::Data(StreamEnvelope {
                session_id: "s".into(),
                channel: "log".into(),
                seq: 9,
                mode: "append".into(),
                payload: json!("x"),
                complete: true,
                timestamp: at,
            }),
            LiveEvent::ActionStored { session_id: "s".into() },
            LiveEvent::DrainAck {
                session_id: "s".into(),
                action_ids: vec!["0badf00d".into()],
            },
            LiveEvent::Render {
                topic: "host\u{1f}a\u{1f}b".into(),
                session_id: "s2".into(),
                created_at: at,
            },
            LiveEvent::KeyRevoked { key_id: "01K".into() },
        ];
        for event in events {
            assert_eq!(decode(&encode(&event)), Some(event.clone()));
        }
    }
}
