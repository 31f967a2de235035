//! The event bus over NATS (`live.bus = "nats"`): what the PostgreSQL LISTEN/NOTIFY bus carries,
//! through a broker, for deployments whose live traffic outgrows one database's NOTIFY.
//!
//! `publish` delivers to this replica's subscribers at once (through the in-process bus it wraps)
//! and queues the event for the broker; a sender task publishes in order on one subject, and a
//! listener task re-publishes every other replica's events to local subscribers. Each replica
//! drops its own messages by an origin id drawn at start-up. Core NATS is at-most-once, like
//! NOTIFY: durability lives in the database (stored events, replay buffers), the bus only wakes.

mod bus;

pub use bus::{NatsBusTasks, NatsEventBus, NatsStartError};

/// `nats.url` as the client reads it (a comma-separated list of servers, `nats://` when no
/// scheme is written); start-up checks it whether or not the bus is NATS. Whether the broker
/// answers is known only by connecting.
pub fn check_url(url: &str) -> Result<(), String> {
    for server in url.split(',') {
        server
            .trim()
            .parse::<async_nats::ServerAddr>()
            .map_err(|e| format!("nats.url: `{}` is not a NATS server address: {e}", server.trim()))?;
    }
    Ok(())
}
