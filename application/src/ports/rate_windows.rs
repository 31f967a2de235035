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

    /// Uncounts one request of `key` admitted at `admitted_at` that was turned away after all
    /// (refused further on, before any work), so only requests that happened count. Only the
    /// window it was counted in is touched: once that window has ended there is nothing to give.
    ///
    /// The default keeps the count: right for quotas where every attempt counts (the sign-in
    /// budgets), and for fakes of those.
    async fn give_back(
        &self,
        _quota: &str,
        _key: &str,
        _window: TimeDelta,
        _admitted_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        Ok(())
    }
}
