//! The retention sweep's store over the agent tables (`RetentionRepository`); handshakes, org
//! invites and invite links nobody can use any more are deleted in `unusable_rows.rs`.
//!
//! Every delete is one statement of at most `batch` rows, written like any other write (through
//! the group-commit writer on SQLite, so requests' writes go between two of them rather than wait
//! behind one long one) and idempotent: replicas racing delete each row once between them. The
//! rows under a session are numbered uniquely (`seq`, `sequence`, `epoch`; without holes from the
//! oldest kept), so a range of `batch` numbers from the lowest is at most `batch` rows; the newest
//! delivery and gesture always stay, as the next ones are numbered after them.

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use sea_orm::sea_query::{CaseStatement, Condition, Expr, ExprTrait, Query, SelectStatement, UpdateStatement};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    StatementBuilder,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::retention::{ReplayWindow, RetentionRepository, SessionAge, Trimmed};
use svc_domain::session::expires_at;

use super::entities::{action_event, session, stream_envelope};
use super::events::{gesture_bytes, last_that_fits, payload_bytes};
use super::session_expiry::{indexed, last_stored_minute};
use super::unusable_rows::Unusable;
use crate::errors::{RACE_ATTEMPTS, lost_race, repository_error};
use crate::group_commit::{Undo, Writer, write_settled};
use crate::read_cache::{Changed, ReadCache};

type Result<T> = std::result::Result<T, RepositoryError>;

pub struct SeaOrmRetentionRepository {
    pub(super) db: DatabaseConnection,
    writer: Option<Writer>,
    cache: Option<ReadCache>,
}

impl SeaOrmRetentionRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            writer: None,
            cache: None,
        }
    }

    /// Deletes through the group-commit writer when there is one (SQLite).
    pub fn with_writer(mut self, writer: Option<Writer>) -> Self {
        self.writer = writer;
        self
    }

    /// The sessions' read cache, which forgets a session once its row is deleted.
    pub fn with_read_cache(mut self, cache: Option<ReadCache>) -> Self {
        self.cache = cache;
        self
    }

    /// Runs one delete (or update) statement; `settled` follows each attempt's commit. The rows
    /// it changed.
    pub(super) async fn write_one(
        &self,
        statement: impl StatementBuilder + Clone + Send + 'static,
        settled: impl Fn(&std::result::Result<u64, DbErr>) + Send + Sync + 'static,
    ) -> std::result::Result<u64, DbErr> {
        let settled = Arc::new(settled);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (statement, settled) = (statement.clone(), settled.clone());
            let deleted = write_settled(
                self.writer.as_ref(),
                &self.db,
                Undo::OneStatement,
                move |txn| Box::pin(async move { Ok(txn.execute(&statement).await?.rows_affected()) }),
                move |result: &std::result::Result<u64, DbErr>| settled(result),
            )
            .await;
            tokio::task::yield_now().await;
            // A deadlock victim (MariaDB's gap locks, replicas racing) deletes again: a delete
            // repeated deletes nothing twice (and an expiry stored again changes nothing).
            match deleted {
                Err(error) if lost_race(&error) && attempt < RACE_ATTEMPTS => continue,
                deleted => return deleted,
            }
        }
    }

    /// Deletes the session's rows of `table` numbered below `below` (only drained gestures with
    /// `drained_only`), `batch` numbers a statement from the lowest.
    async fn delete_below(
        &self,
        table: Kept,
        session_id: &str,
        below: i64,
        drained_only: bool,
        batch: u64,
    ) -> std::result::Result<u64, DbErr> {
        let step = i64::try_from(Ord::max(batch, 1)).unwrap_or(i64::MAX);
        let mut deleted = 0;
        loop {
            let lowest = Query::select()
                .expr(Expr::col(table.key()).min())
                .from(table.name())
                .cond_where(table.rows_of(session_id, drained_only))
                .to_owned();
            let Some(lowest) = self.one_number(&lowest).await?.filter(|lowest| *lowest < below) else {
                return Ok(deleted);
            };
            let upper = Ord::min(below, lowest.saturating_add(step));
            let statement = Query::delete()
                .from_table(table.name())
                .cond_where(table.rows_of(session_id, drained_only))
                .and_where(Expr::col(table.key()).lt(upper))
                .to_owned();
            deleted += self.write_one(statement, |_| {}).await?;
        }
    }

    /// Whether the sessions hold more than `batch` rows of `table` together.
    async fn more_than(&self, table: Kept, session_ids: &[String], batch: u64) -> std::result::Result<bool, DbErr> {
        let probe = Query::select()
            .expr(Expr::val(1))
            .from(table.name())
            .and_where(Expr::col(SESSION_ID).is_in(session_ids.iter().cloned()))
            .limit(1)
            .offset(batch)
            .to_owned();
        Ok(self.db.query_one(&probe).await?.is_some())
    }

    async fn one_number(&self, query: &SelectStatement) -> std::result::Result<Option<i64>, DbErr> {
        match self.db.query_one(query).await? {
            Some(row) => row.try_get_by_index::<Option<i64>>(0),
            None => Ok(None),
        }
    }

    /// The oldest delivery `seq` a replay from the start serves (`None`: the session has none).
    async fn oldest_replayed_delivery(
        &self,
        session_id: &str,
        window: ReplayWindow,
    ) -> std::result::Result<Option<i64>, DbErr> {
        let sizes: Vec<(i64, i64)> = stream_envelope::Entity::find()
            .select_only()
            .column(stream_envelope::Column::Seq)
            .column_as(payload_bytes(self.db.get_database_backend()), "bytes")
            .filter(stream_envelope::Column::SessionId.eq(session_id))
            .order_by_desc(stream_envelope::Column::Seq)
            .limit(window.count)
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(last_that_fits(sizes, window.bytes))
    }

    /// The oldest gesture `sequence` a replay from the start serves (`None`: the session has none).
    async fn oldest_replayed_gesture(
        &self,
        session_id: &str,
        window: ReplayWindow,
    ) -> std::result::Result<Option<i64>, DbErr> {
        let sizes: Vec<(i64, i64)> = action_event::Entity::find()
            .select_only()
            .column(action_event::Column::Sequence)
            .column_as(gesture_bytes(self.db.get_database_backend()), "bytes")
            .filter(action_event::Column::SessionId.eq(session_id))
            .order_by_desc(action_event::Column::Sequence)
            .limit(window.count)
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(last_that_fits(sizes, window.bytes))
    }

    async fn first_undrained(&self, session_id: &str) -> std::result::Result<Option<i64>, DbErr> {
        let first = action_event::Entity::find()
            .select_only()
            .column_as(action_event::Column::Sequence.min(), "first")
            .filter(action_event::Column::SessionId.eq(session_id))
            .filter(action_event::Column::DrainedAt.is_null())
            .into_tuple::<Option<i64>>()
            .one(&self.db)
            .await?;
        Ok(first.flatten())
    }

    async fn delete_session_rows(&self, session_ids: &[String], batch: u64) -> std::result::Result<u64, DbErr> {
        for table in Kept::ALL {
            if self.more_than(table, session_ids, batch).await? {
                for session_id in session_ids {
                    self.delete_below(table, session_id, i64::MAX, false, batch).await?;
                }
            } else {
                let statement = Query::delete()
                    .from_table(table.name())
                    .and_where(Expr::col(SESSION_ID).is_in(session_ids.iter().cloned()))
                    .to_owned();
                self.write_one(statement, |_| {}).await?;
            }
        }
        let heads = Query::delete()
            .from_table(session::Entity)
            .and_where(Expr::col(session::Column::SessionId).is_in(session_ids.iter().cloned()))
            .to_owned();
        let (cache, ids) = (self.cache.clone(), session_ids.to_vec());
        let forget = move |_: &std::result::Result<u64, DbErr>| {
            if let Some(cache) = &cache {
                for id in &ids {
                    cache.forget(id, Changed::Gestures);
                    cache.forget(id, Changed::Deliveries);
                }
            }
        };
        self.write_one(heads, forget).await
    }

    async fn trim_rows(
        &self,
        session_id: &str,
        window: ReplayWindow,
        batch: u64,
    ) -> std::result::Result<Trimmed, DbErr> {
        let deliveries = match self.oldest_replayed_delivery(session_id, window).await? {
            Some(oldest) => {
                self.delete_below(Kept::Deliveries, session_id, oldest, false, batch)
                    .await?
            }
            None => 0,
        };
        let gestures = match self.oldest_replayed_gesture(session_id, window).await? {
            Some(oldest) => {
                // Drains take the oldest first, so the gestures before the first undrained one
                // are all drained, and nothing at or after it goes.
                let below = match self.first_undrained(session_id).await? {
                    Some(first) => Ord::min(oldest, first),
                    None => oldest,
                };
                self.delete_below(Kept::Gestures, session_id, below, true, batch)
                    .await?
            }
            None => 0,
        };
        Ok(Trimmed { deliveries, gestures })
    }

    /// Up to `limit` session ids of `table` after `after`, of rows stamped at or after `since`.
    async fn written(
        &self,
        table: Kept,
        since: Option<DateTime<Utc>>,
        after: Option<&str>,
        limit: u64,
    ) -> std::result::Result<Vec<String>, DbErr> {
        let mut query = Query::select()
            .distinct()
            .column(SESSION_ID)
            .from(table.name())
            .order_by(SESSION_ID, sea_orm::Order::Asc)
            .limit(limit)
            .to_owned();
        if let (Some(since), Some(stamp)) = (since, table.stamp()) {
            query.and_where(Expr::col(stamp).gte(since));
        }
        if let Some(after) = after {
            query.and_where(Expr::col(SESSION_ID).gt(after));
        }
        let rows = self.db.query_all(&query).await?;
        rows.iter().map(|row| row.try_get_by_index::<String>(0)).collect()
    }
}

/// One statement storing on each of `sessions` the expiry a write stores, where that is later
/// than the stored one: a session written since (by a newer server) keeps what it wrote, and
/// statements racing (replicas sweeping at once) store the same.
fn reindex(sessions: &[SessionAge]) -> Option<UpdateStatement> {
    use session::Column;
    if sessions.is_empty() {
        return None;
    }
    let mut value = CaseStatement::new();
    let mut rows = Condition::any();
    for s in sessions {
        let stored = indexed(expires_at(s.last_activity_at, s.ttl_seconds));
        let is_it = Expr::col(Column::SessionId).eq(s.session_id.as_str());
        value = value.case(is_it.clone(), stored);
        rows = rows.add(is_it.and(Expr::col(Column::ExpiresAt).lt(stored)));
    }
    let update = Query::update()
        .table(session::Entity)
        .value(Column::ExpiresAt, value.finally(Expr::col(Column::ExpiresAt)))
        .cond_where(rows)
        .to_owned();
    Some(update)
}

const SESSION_ID: &str = "session_id";

/// A table of rows kept under a session, numbered by its key.
#[derive(Clone, Copy)]
enum Kept {
    FrozenCards,
    Gestures,
    Deliveries,
}

impl Kept {
    const ALL: [Self; 3] = [Self::FrozenCards, Self::Gestures, Self::Deliveries];

    fn name(self) -> &'static str {
        match self {
            Self::FrozenCards => "session_history",
            Self::Gestures => "action_events",
            Self::Deliveries => "stream_envelopes",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Self::FrozenCards => "epoch",
            Self::Gestures => "sequence",
            Self::Deliveries => "seq",
        }
    }

    /// When a row was stored (indexed, `m20261221_000003_retention_indexes`).
    fn stamp(self) -> Option<&'static str> {
        match self {
            Self::FrozenCards => None,
            Self::Gestures => Some("fired_at"),
            Self::Deliveries => Some("timestamp"),
        }
    }

    fn rows_of(self, session_id: &str, drained_only: bool) -> Condition {
        let rows = Condition::all().add(Expr::col(SESSION_ID).eq(session_id));
        if drained_only {
            rows.add(Expr::col("drained_at").is_not_null())
        } else {
            rows
        }
    }
}

#[async_trait::async_trait]
impl RetentionRepository for SeaOrmRetentionRepository {
    async fn expired_sessions(
        &self,
        expired_by: DateTime<Utc>,
        after: Option<&SessionAge>,
        limit: u64,
    ) -> Result<Vec<SessionAge>> {
        use session::Column;
        // A walk of `ix_sessions_expires_at` (`session_expiry.rs`).
        let mut select = session::Entity::find()
            .select_only()
            .columns([
                Column::SessionId,
                Column::ExpiresAt,
                Column::LastActivityAt,
                Column::TtlSeconds,
            ])
            // No stored expiry is later (and a later date is no DATETIME, nor sorts in SQLite's text).
            .filter(Column::ExpiresAt.lte(Ord::min(expired_by.naive_utc(), last_stored_minute())));
        if let Some(after) = after {
            let resume = after.indexed_expiry.naive_utc();
            select = select.filter(
                Condition::any().add(Column::ExpiresAt.gt(resume)).add(
                    Condition::all()
                        .add(Column::ExpiresAt.eq(resume))
                        .add(Column::SessionId.gt(after.session_id.as_str())),
                ),
            );
        }
        let rows: Vec<(String, NaiveDateTime, DateTime<Utc>, i64)> = select
            .order_by_asc(Column::ExpiresAt)
            .order_by_asc(Column::SessionId)
            .limit(limit)
            .into_tuple()
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(rows
            .into_iter()
            .map(|(session_id, indexed_expiry, last_activity_at, ttl)| SessionAge {
                session_id,
                indexed_expiry: indexed_expiry.and_utc(),
                last_activity_at,
                ttl_seconds: u64::try_from(ttl).unwrap_or(0),
            })
            .collect())
    }

    async fn reindex_sessions(&self, sessions: &[SessionAge]) -> Result<u64> {
        let Some(statement) = reindex(sessions) else {
            return Ok(0);
        };
        self.write_one(statement, |_| {}).await.map_err(repository_error)
    }

    async fn delete_sessions(&self, session_ids: &[String], batch: u64) -> Result<u64> {
        if session_ids.is_empty() {
            return Ok(0);
        }
        self.delete_session_rows(session_ids, batch)
            .await
            .map_err(repository_error)
    }

    async fn sessions_written_since(
        &self,
        since: Option<DateTime<Utc>>,
        after: Option<&str>,
        limit: u64,
    ) -> Result<Vec<String>> {
        let mut ids = self
            .written(Kept::Deliveries, since, after, limit)
            .await
            .map_err(repository_error)?;
        ids.extend(
            self.written(Kept::Gestures, since, after, limit)
                .await
                .map_err(repository_error)?,
        );
        ids.sort_unstable();
        ids.dedup();
        ids.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(ids)
    }

    async fn trim(&self, session_id: &str, window: ReplayWindow, batch: u64) -> Result<Trimmed> {
        self.trim_rows(session_id, window, batch)
            .await
            .map_err(repository_error)
    }

    async fn delete_handshakes_created_by(&self, created_by: DateTime<Utc>, limit: u64) -> Result<u64> {
        self.delete_unusable(Unusable::Handshakes, created_by, limit)
            .await
            .map_err(repository_error)
    }

    async fn delete_invite_links_ended_by(&self, ended_by: DateTime<Utc>, limit: u64) -> Result<u64> {
        self.delete_unusable(Unusable::InviteLinks, ended_by, limit)
            .await
            .map_err(repository_error)
    }

    async fn delete_invites_ended_by(&self, ended_by: DateTime<Utc>, limit: u64) -> Result<u64> {
        self.delete_unusable(Unusable::Invites, ended_by, limit)
            .await
            .map_err(repository_error)
    }
}
