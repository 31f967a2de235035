//! sea-orm persistence: one adapter for SQLite (the embedded default), PostgreSQL and
//! MySQL/MariaDB. Backend-specific SQL lives in `backend/`, one file per backend.
//! Entities are written by hand with portable types (`DateTimeUtc`, strings for ids).

mod backend;
mod batched_read;
mod connect;
mod console_sessions;
mod database_claim;
mod errors;
mod group_commit;
mod json_heap;
mod migrations;
mod pair_codes;
mod pg_event_bus;
mod pool_usage;
mod rate_windows;
mod read_cache;
mod read_fence;
mod read_lane;
mod reads;
mod session_watch;
mod write_guards;

pub mod agent;
pub mod hosted;
pub mod oauth;
pub mod operator;
pub mod registry;
pub mod server_secrets;
mod sole_server;
#[cfg(feature = "testing")]
pub mod testing;

pub use connect::{
    ConnectError, PoolSize, connect, connect_and_migrate, connect_and_migrate_with, connect_sole, migrate,
};
pub use console_sessions::SqlConsoleSessions;
pub use database_claim::{CLAIM_KEY, ClaimMode, DatabaseClaim};
pub use group_commit::{Coalescable, Writer};
pub use migrations::Migrator;
pub use pair_codes::SqlPairCodes;
pub use pg_event_bus::{PgBusTasks, PgEventBus};
pub use pool_usage::SqlxPoolUsage;
pub use rate_windows::SqlSharedWindows;
pub use read_cache::ReadCache;
pub use read_lane::{LaneReads, ReadLane};
pub use session_watch::SessionWatch;
pub use sole_server::SoleServer;
