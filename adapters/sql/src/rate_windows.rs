//! `SqlSharedWindows`: fixed windows per address counted in `rate_windows`, one conditional
//! UPDATE per request (after creating the address's row if it is new), so of replicas racing on
//! one address exactly `limit` requests get in per window. Built with sea-query, so the same
//! statements run on SQLite, PostgreSQL and MySQL/MariaDB.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::sea_query::{Condition, Expr, OnConflict, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, DeriveIden, ExprTrait};
use svc_application::ports::RepositoryError;
use svc_application::ports::rate_windows::SharedWindows;

use crate::errors::repository_error;

/// Ended windows of a quota are deleted every this many requests, so the table stays small.
const SWEEP_EVERY: u64 = 256;

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
        let delete = Query::delete()
            .from_table(RateWindows::Table)
            .and_where(Expr::col(RateWindows::Quota).eq(quota))
            .and_where(Expr::col(RateWindows::OpenedAtMs).lte(ended_before_ms))
            .to_owned();
        self.db.execute(&delete).await.map(|_| ())
    }

    /// Creates the address's row as an empty window opening now, unless it exists.
    async fn ensure_row(&self, quota: &str, key: &str, now_ms: i64) -> Result<(), DbErr> {
        let insert = Query::insert()
            .into_table(RateWindows::Table)
            .columns([
                RateWindows::Quota,
                RateWindows::Address,
                RateWindows::OpenedAtMs,
                RateWindows::Admitted,
            ])
            .values_panic([quota.into(), key.into(), now_ms.into(), 0i64.into()])
            .on_conflict(
                OnConflict::columns([RateWindows::Quota, RateWindows::Address])
                    // MySQL spells "do nothing" as an update of these columns to themselves.
                    .do_nothing_on([RateWindows::Quota, RateWindows::Address])
                    .to_owned(),
            )
            .to_owned();
        self.db.execute(&insert).await.map(|_| ())
    }

    /// One conditional UPDATE: reopens an ended window with this request, counts it in an open
    /// one with room, or (window full) matches no row. `admitted` is assigned before
    /// `opened_at_ms` because MySQL reads the columns already assigned in the same statement;
    /// so ordered, the statement means the same on every backend.
    async fn count_in(
        &self,
        quota: &str,
        key: &str,
        limit: u32,
        now_ms: i64,
        ended_before_ms: i64,
    ) -> Result<bool, DbErr> {
        let ended = || Expr::col(RateWindows::OpenedAtMs).lte(ended_before_ms);
        let update = Query::update()
            .table(RateWindows::Table)
            .value(
                RateWindows::Admitted,
                Expr::case(ended(), 1i64).finally(Expr::col(RateWindows::Admitted).add(1i64)),
            )
            .value(
                RateWindows::OpenedAtMs,
                Expr::case(ended(), now_ms).finally(Expr::col(RateWindows::OpenedAtMs)),
            )
            .and_where(Expr::col(RateWindows::Quota).eq(quota))
            .and_where(Expr::col(RateWindows::Address).eq(key))
            .cond_where(
                Condition::any()
                    .add(ended())
                    .add(Expr::col(RateWindows::Admitted).lt(i64::from(limit))),
            )
            .to_owned();
        Ok(self.db.execute(&update).await?.rows_affected() == 1)
    }
}

#[derive(DeriveIden)]
enum RateWindows {
    Table,
    Quota,
    Address,
    OpenedAtMs,
    Admitted,
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
            self.sweep(quota, ended_before_ms).await.map_err(repository_error)?;
        }
        if limit == 0 {
            return Ok(Some(window));
        }
        self.ensure_row(quota, key, now_ms).await.map_err(repository_error)?;
        if self
            .count_in(quota, key, limit, now_ms, ended_before_ms)
            .await
            .map_err(repository_error)?
        {
            return Ok(None);
        }
        let select = Query::select()
            .column(RateWindows::OpenedAtMs)
            .from(RateWindows::Table)
            .and_where(Expr::col(RateWindows::Quota).eq(quota))
            .and_where(Expr::col(RateWindows::Address).eq(key))
            .to_owned();
        let opened_at_ms: i64 = self
            .db
            .query_one(&select)
            .await
            .map_err(repository_error)?
            .map(|row| row.try_get("", "opened_at_ms"))
            .transpose()
            .map_err(repository_error)?
            .unwrap_or(now_ms);
        let ends_in = TimeDelta::milliseconds(opened_at_ms + window.num_milliseconds() - now_ms);
        Ok(Some(ends_in.max(TimeDelta::milliseconds(1))))
    }

    async fn give_back(
        &self,
        quota: &str,
        key: &str,
        window: TimeDelta,
        admitted_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        let admitted_ms = admitted_at.timestamp_millis();
        // Only while the row is still the window the request was counted in: opened by then and
        // not ended by then (a window reopened since opened after it).
        let update = Query::update()
            .table(RateWindows::Table)
            .value(RateWindows::Admitted, Expr::col(RateWindows::Admitted).sub(1i64))
            .and_where(Expr::col(RateWindows::Quota).eq(quota))
            .and_where(Expr::col(RateWindows::Address).eq(key))
            .and_where(Expr::col(RateWindows::OpenedAtMs).lte(admitted_ms))
            .and_where(Expr::col(RateWindows::OpenedAtMs).gt(admitted_ms - window.num_milliseconds()))
            .and_where(Expr::col(RateWindows::Admitted).gt(0i64))
            .to_owned();
        self.db.execute(&update).await.map(|_| ()).map_err(repository_error)
    }
}
