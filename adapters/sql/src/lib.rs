//! sea-orm persistence: one adapter for SQLite (the embedded default) and PostgreSQL.
//! Entities are written by hand with portable types (`DateTimeUtc`, strings for ids).

mod connect;
mod migrations;
mod pg_event_bus;
mod pool_usage;
mod rate_windows;

pub mod agent;
pub mod hosted;
pub mod oauth;
pub mod operator;
pub mod server_secrets;

pub use connect::{ConnectError, PoolSize, connect, connect_and_migrate, connect_and_migrate_with, migrate};
pub use migrations::Migrator;
pub use pg_event_bus::{PgBusTasks, PgEventBus};
pub use pool_usage::SqlxPoolUsage;
pub use rate_windows::SqlSharedWindows;
