//! Per-address windows every replica shares: a fixed window per key (opens at its first admitted
//! request, at most `limit` admitted in it, refused requests not counted), counted atomically in
//! the database, so a client limited on one replica is limited on all.

use chrono::{DateTime, TimeDelta, Utc};

use super::RepositoryError;

#[async_trait::async_trait]
pub trait SharedWindows: Send + Sync {
    /// Counts one request of `key` under the quota `quota` at `now`. `Ok(None)`: admitted;
    /// `Ok(Some(wait))`: the window is spent and ends after `wait`.
    async fn admit(
        &self,
        quota: &str,
        key: &str,
        limit: u32,
        window: TimeDelta,
        now: DateTime<Utc>,
    ) -> Result<Option<TimeDelta>, RepositoryError>;
}
