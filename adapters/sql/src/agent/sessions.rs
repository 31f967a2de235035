use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Query, QueryStatementBuilder};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter,
    QueryOrder, QueryResult, QuerySelect, SelectModel, Set,
};
use serde_json::Value;
use svc_application::ports::RepositoryError;
use svc_application::ports::agent::{
    HostSession, RenderFailure, SessionListing, SessionQuery, SessionRecord, SessionRepository,
};
use svc_application::services::cpu_gate::CpuGate;
use svc_domain::session::{FrozenCard, SessionHead, SessionStatus};

use super::entities::{action_event, session, session_history};
use super::large_rows::RowParser;
use super::seam::{contract_from_text, contract_to_text, from_text, to_text};
use super::session_expiry::indexed_expiry;
use super::session_row::SessionRow;
use crate::errors::repository_error;
use crate::group_commit::{Undo, Writer, write_settled};
use crate::read_cache::{Changed, ReadCache};
use crate::read_lane::ReadLane;
use crate::reads::KeyedRead;

pub struct SeaOrmSessionRepository {
    db: DatabaseConnection,
    writer: Option<Writer>,
    cache: Option<ReadCache>,
    lane: Option<ReadLane>,
    rows: RowParser,
}

impl SeaOrmSessionRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            writer: None,
            cache: None,
            lane: None,
            rows: RowParser::default(),
        }
    }

    /// Parses large rows (a session's props near their budget) on `gate`, off the async workers
    /// (`large_rows.rs`).
    pub fn with_parse_gate(mut self, gate: Option<CpuGate>) -> Self {
        self.rows = RowParser::on(gate);
        self
    }

    /// Runs the read paths' single-row reads on `lane`'s held connections (PostgreSQL).
    pub fn with_read_lane(mut self, lane: Option<ReadLane>) -> Self {
        self.lane = lane;
        self
    }

    /// Writes through the group-commit writer when there is one (SQLite).
    pub fn with_writer(mut self, writer: Option<Writer>) -> Self {
        self.writer = writer;
        self
    }

    /// Reads sessions through `cache`: a database this process alone writes, or a PostgreSQL
    /// replica's fenced cache (`session_watch.rs`).
    pub fn with_read_cache(mut self, cache: Option<ReadCache>) -> Self {
        self.cache = cache;
        self
    }

    async fn get_stored(&self, session_id: &str) -> Result<Option<(SessionRecord, usize)>, RepositoryError> {
        let Some(SessionRow(m)) = SESSION_BY_ID
            .one(&self.db, self.lane.as_ref(), session_id)
            .await
            .map_err(repository_error)?
        else {
            return Ok(None);
        };
        let stored_bytes = stored_bytes(&m);
        let record = self.rows.parse(stored_bytes, move || record(m)).await?;
        Ok(Some((record, stored_bytes)))
    }
}

/// What a kept row weighs: the length of its text columns.
fn stored_bytes(m: &session::Model) -> usize {
    m.props.len() + m.contract.len() + m.context_snapshot.len() + m.intent.len()
}

/// The read every session tool starts with.
pub(crate) static SESSION_BY_ID: KeyedRead<SelectModel<SessionRow>> =
    KeyedRead::new(|id| session::Entity::find_by_id(id.to_owned()).into_model());

/// A session row and the `sequence` of one of its gestures nobody drained (`svc_consume`).
pub(crate) struct SessionWithUndrained {
    session: session::Model,
    first_undrained: Option<i64>,
}

impl FromQueryResult for SessionWithUndrained {
    fn from_query_result(row: &QueryResult, pre: &str) -> Result<Self, DbErr> {
        Ok(Self {
            session: SessionRow::from_query_result(row, pre)?.0,
            first_undrained: row.try_get(pre, "first_undrained")?,
        })
    }
}

pub(crate) static SESSION_WITH_UNDRAINED: KeyedRead<SelectModel<SessionWithUndrained>> = KeyedRead::new(|id| {
    let first_undrained = Query::select()
        .column(action_event::Column::Sequence)
        .from(action_event::Entity)
        .and_where(
            Expr::col((action_event::Entity, action_event::Column::SessionId))
                .equals((session::Entity, session::Column::SessionId)),
        )
        .and_where(action_event::Column::DrainedAt.is_null())
        .limit(1)
        .to_owned();
    session::Entity::find_by_id(id.to_owned())
        .column_as(
            Expr::SubQuery(None, Box::new(first_undrained.into_sub_query_statement())),
            "first_undrained",
        )
        .into_model()
});

/// Without `RETURNING`: nothing of the row (its contract, its props) is read back and parsed.
pub(super) async fn insert_row<C: ConnectionTrait>(c: &C, row: session::ActiveModel) -> Result<(), DbErr> {
    session::Entity::insert(row).exec_without_returning(c).await.map(drop)
}

/// The row a new session is stored as.
pub(super) fn session_row(r: &SessionRecord) -> session::ActiveModel {
    session::ActiveModel {
        session_id: Set(r.session_id.clone()),
        app_id: Set(r.app_id.clone()),
        intent: Set(r.intent.clone()),
        blueprint_id: Set(r.blueprint_id.clone()),
        contract: Set(contract_to_text(&r.contract)),
        theme_id: Set(r.theme_id.clone()),
        status: Set(status_column(r.head.status).to_owned()),
        epoch: Set(i64::from(r.head.epoch)),
        props: Set(to_text(&r.head.props)),
        last_activity_at: Set(r.head.last_activity_at),
        ttl_seconds: Set(clamp_i64(r.head.ttl_seconds)),
        failure_code: Set(r.failure.as_ref().map(|f| f.code.clone())),
        failure_message: Set(r.failure.as_ref().map(|f| f.message.clone())),
        host_name: Set(r.host.host_name.clone()),
        host_session_id: Set(r.host.host_session_id.clone()),
        context_snapshot: Set(to_text(&r.context_snapshot)),
        event_sequence: Set(r.event_sequence),
        created_at: Set(r.created_at),
        revision: Set(r.revision),
        expires_at: Set(indexed_expiry(&r.head)),
    }
}

/// Moves the head one revision on (compare-and-set on `revision`) and keeps the card it froze;
/// `false`, with nothing written, when another writer moved it first.
async fn save_head_rows<C: ConnectionTrait>(
    c: &C,
    session_id: String,
    revision: i64,
    head: SessionHead,
    frozen: Option<FrozenCard>,
) -> Result<bool, DbErr> {
    let moved = session::Entity::update_many()
        .col_expr(session::Column::Epoch, Expr::value(i64::from(head.epoch)))
        .col_expr(session::Column::Props, Expr::value(to_text(&head.props)))
        .col_expr(session::Column::LastActivityAt, Expr::value(head.last_activity_at))
        .col_expr(session::Column::ExpiresAt, Expr::value(indexed_expiry(&head)))
        .col_expr(session::Column::Revision, Expr::value(revision + 1))
        .filter(session::Column::SessionId.eq(session_id.as_str()))
        .filter(session::Column::Revision.eq(revision))
        .exec(c)
        .await?;
    if moved.rows_affected != 1 {
        return Ok(false);
    }
    if let Some(card) = frozen {
        session_history::Entity::insert(session_history::ActiveModel {
            session_id: Set(session_id),
            epoch: Set(i64::from(card.epoch)),
            props: Set(to_text(&card.props)),
            frozen_at: Set(head.last_activity_at),
        })
        .exec_without_returning(c)
        .await?;
    }
    Ok(true)
}

async fn set_snapshot_row<C: ConnectionTrait>(c: &C, session_id: String, snapshot: String) -> Result<(), DbErr> {
    session::Entity::update_many()
        .col_expr(session::Column::ContextSnapshot, Expr::value(snapshot))
        .filter(session::Column::SessionId.eq(session_id))
        .exec(c)
        .await
        .map(drop)
}

/// Only the states a row can hold: expiry is computed from time (`expires_at` only indexes it).
fn status_column(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::Failed => "failed",
        SessionStatus::Active | SessionStatus::Expired => "active",
    }
}

/// The columns a listing reads, in [`SessionRepository::list`]'s order.
type ListedRow = (
    String,
    String,
    DateTime<Utc>,
    String,
    DateTime<Utc>,
    i64,
    Option<String>,
    Option<String>,
);

fn listing(row: ListedRow) -> SessionListing {
    let (session_id, app_id, created_at, status, last_activity_at, ttl_seconds, host_name, host_session_id) = row;
    SessionListing {
        session_id,
        app_id,
        created_at,
        stored_status: stored_status(&status),
        last_activity_at,
        ttl_seconds: u64::try_from(ttl_seconds).unwrap_or(0),
        host: HostSession {
            host_name,
            host_session_id,
        },
    }
}

/// The inverse of [`status_column`].
fn stored_status(column: &str) -> SessionStatus {
    if column == "failed" {
        SessionStatus::Failed
    } else {
        SessionStatus::Active
    }
}

fn record(m: session::Model) -> Result<SessionRecord, RepositoryError> {
    let status = stored_status(&m.status);
    let failure = match (m.failure_code, m.failure_message) {
        (Some(code), message) => Some(RenderFailure {
            code,
            message: message.unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(SessionRecord {
        contract: contract_from_text("sessions.contract", &m.contract)?,
        head: SessionHead {
            status,
            epoch: u32::try_from(m.epoch).unwrap_or(0),
            props: from_text("sessions.props", &m.props)?,
            last_activity_at: m.last_activity_at,
            ttl_seconds: u64::try_from(m.ttl_seconds).unwrap_or(0),
        },
        context_snapshot: from_text("sessions.context_snapshot", &m.context_snapshot)?,
        failure,
        host: HostSession {
            host_name: m.host_name,
            host_session_id: m.host_session_id,
        },
        session_id: m.session_id,
        app_id: m.app_id,
        intent: m.intent,
        blueprint_id: m.blueprint_id,
        theme_id: m.theme_id,
        event_sequence: m.event_sequence,
        created_at: m.created_at,
        revision: m.revision,
    })
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl SessionRepository for SeaOrmSessionRepository {
    async fn insert(&self, r: &SessionRecord) -> Result<(), RepositoryError> {
        let row = session_row(r);
        match &self.writer {
            Some(writer) => writer.write_one(move |txn| Box::pin(insert_row(txn, row))).await,
            None => insert_row(&self.db, row).await,
        }
        .map_err(repository_error)
    }

    async fn get(&self, session_id: &str) -> Result<Option<SessionRecord>, RepositoryError> {
        Ok(self.get_shared(session_id).await?.map(Arc::unwrap_or_clone))
    }

    async fn get_shared(&self, session_id: &str) -> Result<Option<Arc<SessionRecord>>, RepositoryError> {
        let Some(cache) = &self.cache else {
            return Ok(self.get_stored(session_id).await?.map(|(record, _)| Arc::new(record)));
        };
        if let Some(record) = cache.kept_session(session_id).await {
            return Ok(Some(record));
        }
        let ticket = cache.ticket(session_id);
        let Some((record, stored_bytes)) = self.get_stored(session_id).await? else {
            return Ok(None);
        };
        let record = Arc::new(record);
        cache.keep_session(&ticket, &record, stored_bytes);
        Ok(Some(record))
    }

    /// A kept session answers from memory, with "nothing to drain" when that is kept too. On
    /// SQLite a session not kept is read alone and the drain asks about gestures (answered from
    /// memory once known); a server database answers both in one statement, and a replica keeps
    /// what it read.
    async fn get_with_undrained(
        &self,
        session_id: &str,
    ) -> Result<Option<(Arc<SessionRecord>, Option<bool>)>, RepositoryError> {
        if let Some(cache) = &self.cache
            && let Some(record) = cache.kept_session(session_id).await
        {
            return Ok(Some((record, cache.is_quiet(session_id).then_some(false))));
        }
        if self.cache.is_some() && self.db.get_database_backend() == DbBackend::Sqlite {
            return Ok(self.get_shared(session_id).await?.map(|record| (record, None)));
        }
        let ticket = self.cache.as_ref().map(|cache| cache.ticket(session_id));
        let Some(row) = SESSION_WITH_UNDRAINED
            .one(&self.db, self.lane.as_ref(), session_id)
            .await
            .map_err(repository_error)?
        else {
            return Ok(None);
        };
        let undrained = row.first_undrained.is_some();
        let stored_bytes = stored_bytes(&row.session);
        let session = Arc::new(self.rows.parse(stored_bytes, move || record(row.session)).await?);
        if let (Some(cache), Some(ticket)) = (&self.cache, &ticket) {
            cache.keep_session(ticket, &session, stored_bytes);
            if !undrained {
                cache.keep_quiet(ticket, session_id);
            }
        }
        Ok(Some((session, Some(undrained))))
    }

    async fn save_head(
        &self,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        frozen: Option<&FrozenCard>,
    ) -> Result<bool, RepositoryError> {
        let on_writer = self.writer.is_some();
        let settled = ReadCache::settling_head(self.cache.as_ref(), session_id, revision, head, on_writer);
        let (id, head, frozen) = (session_id.to_owned(), head.clone(), frozen.cloned());
        // The head's UPDATE alone is one statement; keeping a frozen card adds an INSERT.
        let undo = if frozen.is_some() {
            Undo::Savepoint
        } else {
            Undo::OneStatement
        };
        write_settled(
            self.writer.as_ref(),
            &self.db,
            undo,
            move |txn| Box::pin(save_head_rows(txn, id, revision, head, frozen)),
            settled,
        )
        .await
        .map_err(repository_error)
    }

    async fn frozen_props(&self, session_id: &str, epoch: u32) -> Result<Option<Value>, RepositoryError> {
        let Some(frozen) = session_history::Entity::find_by_id((session_id.to_owned(), i64::from(epoch)))
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(None);
        };
        let stored_bytes = frozen.props.len();
        let props = self
            .rows
            .parse(stored_bytes, move || from_text("session_history.props", &frozen.props))
            .await?;
        Ok(Some(props))
    }

    async fn set_context_snapshot(&self, session_id: &str, snapshot: &Value) -> Result<(), RepositoryError> {
        let (id, snapshot) = (session_id.to_owned(), to_text(snapshot));
        write_settled(
            self.writer.as_ref(),
            &self.db,
            Undo::OneStatement,
            move |txn| Box::pin(set_snapshot_row(txn, id, snapshot)),
            ReadCache::forgetting(self.cache.as_ref(), session_id, Changed::Row),
        )
        .await
        .map_err(repository_error)
    }

    async fn list(&self, app_id: &str, query: &SessionQuery) -> Result<Vec<SessionListing>, RepositoryError> {
        use session::Column;
        let mut select = session::Entity::find()
            .select_only()
            .columns([
                Column::SessionId,
                Column::AppId,
                Column::CreatedAt,
                Column::Status,
                Column::LastActivityAt,
                Column::TtlSeconds,
                Column::HostName,
                Column::HostSessionId,
            ])
            .filter(session::Column::AppId.eq(app_id));
        if let Some(host) = &query.host_name {
            select = select.filter(session::Column::HostName.eq(host.as_str()));
        }
        if let Some(host_session) = &query.host_session_id {
            select = select.filter(session::Column::HostSessionId.eq(host_session.as_str()));
        }
        // Take the newest `limit`, then answer newest last.
        let mut rows = select
            .order_by_desc(session::Column::CreatedAt)
            .order_by_desc(session::Column::SessionId)
            .limit(query.limit)
            .into_tuple::<ListedRow>()
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        rows.reverse();
        Ok(rows.into_iter().map(listing).collect())
    }
}
