//! The retention sweep's port: finding the sessions whose rows may go and the sessions written
//! lately, deleting a session with everything stored under it, trimming what a replay can no
//! longer serve, deleting handshakes, org invites and invite links nobody can use any more, and
//! indexing anew the sessions an older server left indexed too early. Every operation is bounded
//! (rows per statement) and safe for replicas racing.

use chrono::{DateTime, Utc};

use super::RepositoryError;

type Result<T> = std::result::Result<T, RepositoryError>;

/// What the expiry rule needs of a stored session, and where a walk over them resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionAge {
    pub session_id: String,
    /// The expiry the store orders the walk by: after the session's expiry by at most ten seconds,
    /// or earlier for a row it could not index (written by an older server). The expiry rule
    /// decides from `last_activity_at` and `ttl_seconds`.
    pub indexed_expiry: DateTime<Utc>,
    pub last_activity_at: DateTime<Utc>,
    pub ttl_seconds: u64,
}

/// What a replay serves of one session's deliveries, and of its gestures: the newest `count`,
/// and of those the newest that fit in `bytes` of stored JSON together (the newest always).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayWindow {
    pub count: u64,
    pub bytes: usize,
}

/// What trimming deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trimmed {
    pub deliveries: u64,
    pub gestures: u64,
}

#[async_trait::async_trait]
pub trait RetentionRepository: Send + Sync {
    /// Up to `limit` sessions whose indexed expiry is at or before `expired_by`, in
    /// `(indexed_expiry, session_id)` order after `after`: every session expired ten seconds
    /// before, some expiring up to then, and rows not indexed.
    async fn expired_sessions(
        &self,
        expired_by: DateTime<Utc>,
        after: Option<&SessionAge>,
        limit: u64,
    ) -> Result<Vec<SessionAge>>;

    /// Stores on each of these sessions the indexed expiry a write of it stores now (from the
    /// `last_activity_at` and `ttl_seconds` read), in one statement, where that is later than
    /// the one stored: a row an older server wrote, indexed too early, then leaves the walk
    /// until it expires. A row written since with a later expiry is left as it is. How many rows
    /// it changed.
    async fn reindex_sessions(&self, sessions: &[SessionAge]) -> Result<u64>;

    /// Deletes these sessions with everything stored under them (frozen cards, gestures,
    /// deliveries), at most `batch` rows a statement, the `sessions` rows last: a sweep cut off
    /// midway leaves them to be found again. The number of sessions deleted (another replica may
    /// have deleted some first).
    async fn delete_sessions(&self, session_ids: &[String], batch: u64) -> Result<u64>;

    /// Up to `limit` ids, in order after `after`, of the sessions holding a gesture or a delivery
    /// stored at or after `since` (any at all, with `None`).
    async fn sessions_written_since(
        &self,
        since: Option<DateTime<Utc>>,
        after: Option<&str>,
        limit: u64,
    ) -> Result<Vec<String>>;

    /// Deletes the session's deliveries, and its drained gestures, older than what `window`
    /// keeps, at most `batch` rows a statement. A gesture nobody drained is never deleted, nor
    /// any after it (a session's sequence numbers keep no holes).
    async fn trim(&self, session_id: &str, window: ReplayWindow, batch: u64) -> Result<Trimmed>;

    /// Deletes up to `limit` handshakes created at or before `created_by`, in one statement; how
    /// many it deleted.
    async fn delete_handshakes_created_by(&self, created_by: DateTime<Utc>, limit: u64) -> Result<u64>;

    /// Deletes up to `limit` org invite links whose invite was accepted, revoked or expired at or
    /// before `ended_by` (or no longer exists), in one statement; how many it deleted.
    async fn delete_invite_links_ended_by(&self, ended_by: DateTime<Utc>, limit: u64) -> Result<u64>;

    /// Deletes up to `limit` org invites accepted, revoked or expired at or before `ended_by`, in
    /// one statement; how many it deleted.
    async fn delete_invites_ended_by(&self, ended_by: DateTime<Utc>, limit: u64) -> Result<u64>;
}
