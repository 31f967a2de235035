//! `SqlSharedWindows`: fixed windows per address counted in `rate_windows`, one upsert per
//! request, so of replicas racing on one address exactly `limit` requests get in per window.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};
use svc_application::ports::RepositoryError;
use svc_application::ports::rate_windows::SharedWindows;

/// Ended windows of a quota are deleted every this many requests, so the table stays small.
const SWEEP_EVERY: u64 = 256;

/// Opens a window, counts one request in an open one with room, or (window full) changes
/// nothing and returns no row. `$3` is now, `$4` the opening time of windows that have ended.
const ADMIT: &str = "INSERT INTO rate_windows (quota, address, opened_at_ms, admitted) VALUES ($1, $2, $3, 1) \
     ON CONFLICT (quota, address) DO UPDATE SET \
       opened_at_ms = CASE WHEN rate_windows.opened_at_ms <= $4 THEN $3 ELSE rate_windows.opened_at_ms END, \
       admitted = CASE WHEN rate_windows.opened_at_ms <= $4 THEN 1 ELSE rate_windows.admitted + 1 END \
     WHERE rate_windows.opened_at_ms <= $4 OR rate_windows.admitted < $5 \
     RETURNING opened_at_ms";

pub struct SqlSharedWindows {
    db: DatabaseConnection,
    requests: AtomicU64,
}

impl SqlSharedWindows {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            requests: AtomicU64::new(0),
        }
    }

    async fn sweep(&self, quota: &str, ended_before_ms: i64) -> Result<(), DbErr> {
        self.db
            .execute_raw(Statement::from_sql_and_values(
                self.db.get_database_backend(),
                "DELETE FROM rate_windows WHERE quota = $1 AND opened_at_ms <= $2",
                [quota.into(), ended_before_ms.into()],
            ))
            .await
            .map(|_| ())
    }
}

fn unavailable(error: DbErr) -> RepositoryError {
    RepositoryError::Unavailable(anyhow::Error::new(error))
}

#[async_trait::async_trait]
impl SharedWindows for SqlSharedWindows {
    async fn admit(
        &self,
        quota: &str,
        key: &str,
        limit: u32,
        window: TimeDelta,
        now: DateTime<Utc>,
    ) -> Result<Option<TimeDelta>, RepositoryError> {
        let now_ms = now.timestamp_millis();
        let ended_before_ms = now_ms - window.num_milliseconds();
        if self.requests.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.sweep(quota, ended_before_ms).await.map_err(unavailable)?;
        }
        if limit == 0 {
            return Ok(Some(window));
        }
        let backend = self.db.get_database_backend();
        let admitted = self
            .db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                ADMIT,
                [
                    quota.into(),
                    key.into(),
                    now_ms.into(),
                    ended_before_ms.into(),
                    i64::from(limit).into(),
                ],
            ))
            .await
            .map_err(unavailable)?;
        if admitted.is_some() {
            return Ok(None);
        }
        let opened_at_ms: i64 = self
            .db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                "SELECT opened_at_ms FROM rate_windows WHERE quota = $1 AND address = $2",
                [quota.into(), key.into()],
            ))
            .await
            .map_err(unavailable)?
            .map(|row| row.try_get("", "opened_at_ms"))
            .transpose()
            .map_err(unavailable)?
            .unwrap_or(now_ms);
        let ends_in = TimeDelta::milliseconds(opened_at_ms + window.num_milliseconds() - now_ms);
        Ok(Some(ends_in.max(TimeDelta::milliseconds(1))))
    }
}
