//! What the application reports for an operator's metrics (`GET /metrics`). Implementations are
//! called on the render path, so they must be cheap and never fail; every label they receive comes
//! from a closed set, so the metrics' label sets stay bounded.

use std::time::Duration;

/// Figures of the generation path.
pub trait GenerationTelemetry: Send + Sync {
    /// A handshake looked for a cached blueprint: `hit` when one will serve the render.
    fn cache_lookup(&self, hit: bool);
    /// A cold generation got its queue slot after waiting `waited`.
    fn queue_waited(&self, waited: Duration);
    /// A cold generation ended after `took`: `outcome` is `rendered` or the failure's code
    /// (Document 1's closed set: `PRODUCTION_FAILED`, `NO_CREDENTIALS`, ...).
    fn generation_finished(&self, outcome: &'static str, took: Duration);
}

/// Figures of the group-commit writer (SQLite): how many writes each commit, and so each fsync,
/// carried.
pub trait WriteTelemetry: Send + Sync {
    /// A commit carried `alone` writes that ran one statement (or savepoint) at a time and
    /// `listed` writes sent in statement lists with others of their text.
    fn batch_committed(&self, alone: usize, listed: usize);
}

/// Reports nothing (tests, and servers wired without metrics).
pub struct NoTelemetry;

impl WriteTelemetry for NoTelemetry {
    fn batch_committed(&self, _: usize, _: usize) {}
}

impl GenerationTelemetry for NoTelemetry {
    fn cache_lookup(&self, _: bool) {}
    fn queue_waited(&self, _: Duration) {}
    fn generation_finished(&self, _: &'static str, _: Duration) {}
}

/// Connections of the database pool at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// Open connections, idle or in use.
    pub open: u32,
    /// Open connections no one is using.
    pub idle: u32,
    /// The most the pool opens.
    pub max: u32,
    /// Reads of the request paths since start that had a statement of their own (PostgreSQL).
    pub reads_alone: u64,
    /// Reads of the request paths since start that shared one statement with others of their
    /// kind waiting at the same time (PostgreSQL).
    pub reads_shared: u64,
}

/// Reads the database pool's use, for the metrics scrape.
pub trait DatabasePoolUsage: Send + Sync {
    fn usage(&self) -> PoolUsage;
}
