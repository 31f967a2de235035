use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, SelectGetableTuple, Set,
};
use serde_json::Value;
use svc_application::ports::RepositoryError;
use svc_application::ports::agent::{
    ActionEventRecord, DrainBound, EventRepository, NewActionEvent, StreamEnvelope, WindowHead,
};
use svc_application::ports::retention::ReplayWindow;
use svc_domain::action_event::action_id;

use svc_application::services::cpu_gate::CpuGate;

use super::entities::{action_event, session, stream_envelope};
use super::large_rows::RowParser;
use super::seam::{from_text, to_text};
use crate::backend;
use crate::errors::{lost_race, repository_error};
use crate::group_commit::{Undo, Writer, write_settled};
use crate::read_cache::{Changed, ReadCache};
use crate::read_lane::ReadLane;
use crate::reads::KeyedRead;

/// Sequence numbers are max + 1 under a unique index; concurrent writers that collide retry.
/// Stream `seq` counts per session, across channels, so one `fromSeq` cursor resumes them all
/// (and each channel's numbers still only grow).
const MAX_SEQUENCE_ATTEMPTS: usize = 16;

/// Measurements of one drain that may each find their gestures taken by concurrent drains.
const DRAIN_ATTEMPTS: usize = 4;

pub struct SeaOrmEventRepository {
    db: DatabaseConnection,
    writer: Option<Writer>,
    cache: Option<ReadCache>,
    lane: Option<ReadLane>,
    rows: RowParser,
}

impl SeaOrmEventRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            writer: None,
            cache: None,
            lane: None,
            rows: RowParser::default(),
        }
    }

    /// Parses large rows (a delivery's payload, a gesture's data and context, up to a request
    /// body) that replays and drains read on `gate`, off the async workers (`large_rows.rs`).
    pub fn with_parse_gate(mut self, gate: Option<CpuGate>) -> Self {
        self.rows = RowParser::on(gate);
        self
    }

    /// The gestures of `rows`, each parsed where its size says (`large_rows.rs`).
    async fn actions(&self, rows: Vec<action_event::Model>) -> Result<Vec<ActionEventRecord>, RepositoryError> {
        let mut parsed = Vec::with_capacity(rows.len());
        for m in rows {
            let stored_bytes = m.action_data.len() + m.ui_context.len();
            parsed.push(self.rows.parse(stored_bytes, move || action(m)).await?);
        }
        Ok(parsed)
    }

    /// The deliveries of `rows`, as [`SeaOrmEventRepository::actions`] parses gestures.
    async fn envelopes(&self, rows: Vec<stream_envelope::Model>) -> Result<Vec<StreamEnvelope>, RepositoryError> {
        let mut parsed = Vec::with_capacity(rows.len());
        for m in rows {
            let stored_bytes = m.payload.len();
            parsed.push(self.rows.parse(stored_bytes, move || envelope(m)).await?);
        }
        Ok(parsed)
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

    /// Answers "anything to drain?" and the last delivery `seq` through `cache`, which every
    /// append here forgets: a database this process alone writes, or a PostgreSQL replica's
    /// fenced cache (which keeps no delivery `seq`; a stored gesture is announced by its row).
    pub fn with_read_cache(mut self, cache: Option<ReadCache>) -> Self {
        self.cache = cache;
        self
    }

    /// One attempt to store a gesture: the stored row and whether this call stored it (a
    /// `clientSeq` seen before answers the first row again).
    async fn try_append_action(&self, event: &NewActionEvent) -> Result<(action_event::Model, bool), DbErr> {
        let forget = ReadCache::forgetting(self.cache.as_ref(), &event.session_id, Changed::Gestures);
        let event = event.clone();
        write_settled(
            self.writer.as_ref(),
            &self.db,
            Undo::Savepoint,
            move |txn| Box::pin(append_action_rows(txn, event)),
            forget,
        )
        .await
    }

    async fn try_append_stream(&self, envelope: &StreamEnvelope) -> Result<i64, DbErr> {
        let forget = ReadCache::forgetting(self.cache.as_ref(), &envelope.session_id, Changed::Deliveries);
        let envelope = envelope.clone();
        write_settled(
            self.writer.as_ref(),
            &self.db,
            Undo::OneStatement,
            move |txn| Box::pin(append_stream_row(txn, envelope)),
            forget,
        )
        .await
    }

    /// Whether the session holds a gesture nobody drained: a read (answered from the cache when
    /// the session is known quiet), so an empty drain (the usual `svc_consume`) never takes the
    /// write lock.
    async fn has_undrained(&self, session_id: &str) -> Result<bool, DbErr> {
        let Some(cache) = &self.cache else {
            return self.has_undrained_stored(session_id).await;
        };
        if cache.kept_quiet(session_id).await {
            return Ok(false);
        }
        let ticket = cache.ticket(session_id);
        let undrained = self.has_undrained_stored(session_id).await?;
        if !undrained {
            cache.keep_quiet(&ticket, session_id);
        }
        Ok(undrained)
    }

    async fn last_stream_seq_stored(&self, session_id: &str) -> Result<i64, RepositoryError> {
        let last = LAST_DELIVERY_SEQ
            .one(&self.db, self.lane.as_ref(), session_id)
            .await
            .map_err(repository_error)?
            .flatten();
        Ok(last.unwrap_or(0))
    }

    async fn has_undrained_stored(&self, session_id: &str) -> Result<bool, DbErr> {
        let first = FIRST_UNDRAINED.one(&self.db, self.lane.as_ref(), session_id).await?;
        Ok(first.is_some())
    }
}

/// A session's highest delivery `seq` (`None` when it has none).
pub(crate) static LAST_DELIVERY_SEQ: KeyedRead<SelectGetableTuple<Option<i64>>> = KeyedRead::new(|id| {
    stream_envelope::Entity::find()
        .select_only()
        .column_as(stream_envelope::Column::Seq.max(), "max")
        .filter(stream_envelope::Column::SessionId.eq(id))
        .into_tuple()
});

/// The `sequence` of one gesture of a session that nobody drained.
pub(crate) static FIRST_UNDRAINED: KeyedRead<SelectGetableTuple<i64>> = KeyedRead::new(|id| {
    action_event::Entity::find()
        .select_only()
        .column(action_event::Column::Sequence)
        .filter(action_event::Column::SessionId.eq(id))
        .filter(action_event::Column::DrainedAt.is_null())
        .limit(1)
        .into_tuple()
});

/// Stores a gesture at max + 1 (the unique index refuses a sequence another writer took first,
/// and the caller tries again) and moves the session's `event_sequence` with it. A `clientSeq`
/// already stored answers that row instead: a retried gesture is stored once.
async fn append_action_rows<C: ConnectionTrait>(
    c: &C,
    event: NewActionEvent,
) -> Result<(action_event::Model, bool), DbErr> {
    if let Some(seq) = event.client_seq
        && let Some(existing) = action_event::Entity::find()
            .filter(action_event::Column::SessionId.eq(event.session_id.as_str()))
            .filter(action_event::Column::ClientSeq.eq(seq))
            .one(c)
            .await?
    {
        return Ok((existing, false));
    }
    let last: Option<i64> = action_event::Entity::find()
        .select_only()
        .column_as(action_event::Column::Sequence.max(), "max")
        .filter(action_event::Column::SessionId.eq(event.session_id.as_str()))
        .into_tuple::<Option<i64>>()
        .one(c)
        .await?
        .flatten();
    let sequence = last.unwrap_or(0) + 1;
    let correlation_seq = event
        .client_seq
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(sequence.unsigned_abs());
    let model = action_event::ActiveModel {
        session_id: Set(event.session_id.clone()),
        sequence: Set(sequence),
        client_seq: Set(event.client_seq),
        intent: Set(event.intent.clone()),
        action_data: Set(to_text(&event.action_data)),
        ui_context: Set(to_text(&event.ui_context)),
        action_id: Set(action_id(&event.session_id, &event.intent, correlation_seq)),
        fired_at: Set(event.fired_at),
        drained_at: Set(None),
    }
    .insert(c)
    .await?;
    session::Entity::update_many()
        .col_expr(session::Column::EventSequence, Expr::value(sequence))
        .filter(session::Column::SessionId.eq(event.session_id.as_str()))
        .exec(c)
        .await?;
    Ok((model, true))
}

/// Stores a delivery at the session's max `seq` + 1 (see [`append_action_rows`] for races).
async fn append_stream_row<C: ConnectionTrait>(c: &C, envelope: StreamEnvelope) -> Result<i64, DbErr> {
    let last: Option<i64> = stream_envelope::Entity::find()
        .select_only()
        .column_as(stream_envelope::Column::Seq.max(), "max")
        .filter(stream_envelope::Column::SessionId.eq(envelope.session_id.as_str()))
        .into_tuple::<Option<i64>>()
        .one(c)
        .await?
        .flatten();
    let seq = last.unwrap_or(0) + 1;
    stream_envelope::Entity::insert(stream_envelope::ActiveModel {
        session_id: Set(envelope.session_id),
        channel: Set(envelope.channel),
        seq: Set(seq),
        mode: Set(envelope.mode),
        payload: Set(to_text(&envelope.payload)),
        complete: Set(envelope.complete),
        timestamp: Set(envelope.timestamp),
    })
    .exec_without_returning(c)
    .await?;
    Ok(seq)
}

/// Marks the oldest undrained gestures drained and answers them, as many as `bound` allows (the
/// oldest always): the sizes first, then one UPDATE ...
/// RETURNING of those, so two concurrent drains never return the same gesture. A drain that
/// measured the same gestures as a concurrent one and found them taken measures again, so the
/// gestures after them are not left waiting for the next call.
async fn drain_rows<C: ConnectionTrait>(
    c: &C,
    session_id: String,
    at: DateTime<Utc>,
    bound: DrainBound,
) -> Result<Vec<action_event::Model>, DbErr> {
    for _ in 0..DRAIN_ATTEMPTS {
        let sizes: Vec<(i64, i64)> = undrained(&session_id)
            .select_only()
            .column(action_event::Column::Sequence)
            .column_as(gesture_bytes(c.get_database_backend()), "bytes")
            .order_by_asc(action_event::Column::Sequence)
            .limit(bound.gestures)
            .into_tuple()
            .all(c)
            .await?;
        let Some(last) = last_that_fits(sizes, bound.bytes) else {
            return Ok(Vec::new());
        };
        let taken = action_event::Entity::update_many()
            .col_expr(action_event::Column::DrainedAt, Expr::value(at))
            .filter(action_event::Column::SessionId.eq(session_id.as_str()))
            .filter(action_event::Column::DrainedAt.is_null())
            .filter(action_event::Column::Sequence.lte(last))
            .exec_with_returning(c)
            .await?;
        if !taken.is_empty() {
            return Ok(taken);
        }
    }
    Ok(Vec::new())
}

/// The session's undrained gestures.
pub(crate) fn undrained(session_id: &str) -> sea_orm::Select<action_event::Entity> {
    action_event::Entity::find()
        .filter(action_event::Column::SessionId.eq(session_id))
        .filter(action_event::Column::DrainedAt.is_null())
}

/// The session's deliveries after `after_seq`, on every channel.
fn deliveries_after(session_id: &str, after_seq: i64) -> sea_orm::Select<stream_envelope::Entity> {
    stream_envelope::Entity::find()
        .filter(stream_envelope::Column::SessionId.eq(session_id))
        .filter(stream_envelope::Column::Seq.gt(after_seq))
}

/// The session's gestures after `after_sequence`, drained or not.
fn gestures_after(session_id: &str, after_sequence: i64) -> sea_orm::Select<action_event::Entity> {
    action_event::Entity::find()
        .filter(action_event::Column::SessionId.eq(session_id))
        .filter(action_event::Column::Sequence.gt(after_sequence))
}

/// The stored size of a gesture's action data and context together, read without the values
/// where the database can (PostgreSQL, and SQLite's `octet_length` on the column itself).
pub(crate) fn gesture_bytes(backend: DbBackend) -> sea_orm::sea_query::SimpleExpr {
    Expr::cust(match backend {
        DbBackend::Postgres => "CAST(octet_length(action_data) + octet_length(ui_context) AS BIGINT)",
        DbBackend::MySql => "CAST(LENGTH(action_data) + LENGTH(ui_context) AS SIGNED)",
        _ => "octet_length(action_data) + octet_length(ui_context)",
    })
}

/// The stored size of a delivery's payload, read as [`gesture_bytes`] reads a gesture's.
pub(crate) fn payload_bytes(backend: DbBackend) -> sea_orm::sea_query::SimpleExpr {
    Expr::cust(match backend {
        DbBackend::Postgres => "CAST(octet_length(payload) AS BIGINT)",
        DbBackend::MySql => "CAST(LENGTH(payload) AS SIGNED)",
        _ => "octet_length(payload)",
    })
}

/// An event table as the replay reads below take it: the column that numbers a session's rows
/// (the cursor's), and a row's stored size (what a byte budget counts).
trait Replayed: EntityTrait {
    const KEY: Self::Column;

    fn bytes(backend: DbBackend) -> sea_orm::sea_query::SimpleExpr;
}

impl Replayed for stream_envelope::Entity {
    const KEY: Self::Column = stream_envelope::Column::Seq;

    fn bytes(backend: DbBackend) -> sea_orm::sea_query::SimpleExpr {
        payload_bytes(backend)
    }
}

impl Replayed for action_event::Entity {
    const KEY: Self::Column = action_event::Column::Sequence;

    fn bytes(backend: DbBackend) -> sea_orm::sea_query::SimpleExpr {
        gesture_bytes(backend)
    }
}

/// The newest rows of `in_range` by key, oldest first: at most `limit` of them and no more than
/// `max_bytes` of stored size together (the newest always). Two reads: the sizes first, then
/// the rows that fit, so this process never holds a thousand values of megabytes to answer a
/// few (MariaDB reads each value to measure it, in the server).
async fn newest_that_fit<E: Replayed>(
    db: &DatabaseConnection,
    in_range: impl Fn() -> sea_orm::Select<E>,
    limit: u64,
    max_bytes: usize,
) -> Result<Vec<E::Model>, DbErr> {
    let window = fitting(newest_sizes(db, &in_range, limit).await?, max_bytes);
    let (Some(&(oldest, _)), Some(&(newest, _))) = (window.first(), window.last()) else {
        return Ok(Vec::new());
    };
    rows_between(db, &in_range, oldest, newest).await
}

/// The window [`newest_that_fit`] reads (`window`), of it only the oldest rows while their
/// sizes together stay within `read_bytes` (the first always): the sizes are read anyway, so
/// cutting by bytes costs nothing and the values past the cut are never fetched.
async fn window_head<E: Replayed>(
    db: &DatabaseConnection,
    in_range: impl Fn() -> sea_orm::Select<E>,
    window: ReplayWindow,
    read_bytes: usize,
) -> Result<WindowHead<E::Model>, DbErr> {
    // One row past the count says whether older rows were left out for it.
    let mut newest = newest_sizes(db, &in_range, window.count.saturating_add(1)).await?;
    let overflowed = newest.len() as u64 > window.count;
    newest.truncate(usize::try_from(window.count).unwrap_or(usize::MAX));
    let sizes = fitting(newest, window.bytes);
    let (Some(&(oldest, _)), Some(&(newest, _))) = (sizes.first(), sizes.last()) else {
        return Ok(WindowHead {
            items: Vec::new(),
            cut: false,
            overflowed,
        });
    };
    let last = last_that_fits(sizes, read_bytes).unwrap_or(newest);
    Ok(WindowHead {
        items: rows_between(db, &in_range, oldest, last).await?,
        cut: last < newest,
        overflowed,
    })
}

/// The `(key, size)` of the newest `limit` rows of `in_range` by key, newest first.
async fn newest_sizes<E: Replayed>(
    db: &DatabaseConnection,
    in_range: &impl Fn() -> sea_orm::Select<E>,
    limit: u64,
) -> Result<Vec<(i64, i64)>, DbErr> {
    in_range()
        .select_only()
        .column(E::KEY)
        .column_as(E::bytes(db.get_database_backend()), "bytes")
        .order_by_desc(E::KEY)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await
}

/// Of `newest` (newest first), the newest within `max_bytes` together (the newest always),
/// oldest first.
fn fitting(mut newest: Vec<(i64, i64)>, max_bytes: usize) -> Vec<(i64, i64)> {
    if let Some(oldest) = last_that_fits(newest.iter().copied(), max_bytes) {
        newest.retain(|&(key, _)| key >= oldest);
    }
    newest.reverse();
    newest
}

/// The rows of `in_range` with `oldest <= key <= last`, in key order.
async fn rows_between<E: Replayed>(
    db: &DatabaseConnection,
    in_range: &impl Fn() -> sea_orm::Select<E>,
    oldest: i64,
    last: i64,
) -> Result<Vec<E::Model>, DbErr> {
    in_range()
        .filter(E::KEY.gte(oldest))
        .filter(E::KEY.lte(last))
        .order_by_asc(E::KEY)
        .all(db)
        .await
}

/// Walking `(key, size)` pairs in the order they would be taken, the key of the last one that
/// still fits in `max_bytes` together with those before it; the first always fits (one item is
/// never refused for its size: it was admitted when stored). `None` when there are none.
pub(crate) fn last_that_fits(sizes: impl IntoIterator<Item = (i64, i64)>, max_bytes: usize) -> Option<i64> {
    let mut last = None;
    let mut total = 0usize;
    for (key, size) in sizes {
        total = total.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
        if total > max_bytes && last.is_some() {
            break;
        }
        last = Some(key);
    }
    last
}

fn action(m: action_event::Model) -> Result<ActionEventRecord, RepositoryError> {
    Ok(ActionEventRecord {
        action_data: from_text("action_events.action_data", &m.action_data)?,
        ui_context: from_text("action_events.ui_context", &m.ui_context)?,
        session_id: m.session_id,
        sequence: m.sequence,
        client_seq: m.client_seq,
        intent: m.intent,
        action_id: m.action_id,
        fired_at: m.fired_at,
    })
}

fn envelope(m: stream_envelope::Model) -> Result<StreamEnvelope, RepositoryError> {
    Ok(StreamEnvelope {
        payload: from_text("stream_envelopes.payload", &m.payload)?,
        session_id: m.session_id,
        channel: m.channel,
        seq: m.seq,
        mode: m.mode,
        complete: m.complete,
        timestamp: m.timestamp,
    })
}

#[async_trait::async_trait]
impl EventRepository for SeaOrmEventRepository {
    async fn append_action(&self, event: &NewActionEvent) -> Result<(ActionEventRecord, bool), RepositoryError> {
        for _ in 0..MAX_SEQUENCE_ATTEMPTS {
            match self.try_append_action(event).await {
                Ok((model, fresh)) => return Ok((action(model)?, fresh)),
                Err(e) if lost_race(&e) => continue,
                Err(e) => return Err(repository_error(e)),
            }
        }
        Err(RepositoryError::Conflict(format!(
            "could not sequence a gesture on {}",
            event.session_id
        )))
    }

    async fn drain(
        &self,
        session_id: &str,
        at: DateTime<Utc>,
        bound: DrainBound,
    ) -> Result<Vec<ActionEventRecord>, RepositoryError> {
        if !self.has_undrained(session_id).await.map_err(repository_error)? {
            return Ok(Vec::new());
        }
        let id = session_id.to_owned();
        let mut drained = match (&self.writer, self.db.get_database_backend()) {
            (Some(writer), _) => {
                writer
                    .write_one(move |txn| Box::pin(drain_rows(txn, id, at, bound)))
                    .await
            }
            (None, DbBackend::MySql) => backend::mysql::drain_actions(&self.db, session_id, at, bound).await,
            (None, _) => drain_rows(&self.db, id, at, bound).await,
        }
        .map_err(repository_error)?;
        drained.sort_by_key(|m| m.sequence);
        self.actions(drained).await
    }

    async fn append_stream(
        &self,
        session_id: &str,
        channel: &str,
        mode: &str,
        payload: &Value,
        complete: bool,
        at: DateTime<Utc>,
    ) -> Result<StreamEnvelope, RepositoryError> {
        let mut pending = StreamEnvelope {
            session_id: session_id.to_owned(),
            channel: channel.to_owned(),
            seq: 0,
            mode: mode.to_owned(),
            payload: payload.clone(),
            complete,
            timestamp: at,
        };
        for _ in 0..MAX_SEQUENCE_ATTEMPTS {
            match self.try_append_stream(&pending).await {
                Ok(seq) => {
                    pending.seq = seq;
                    return Ok(pending);
                }
                Err(e) if lost_race(&e) => continue,
                Err(e) => return Err(repository_error(e)),
            }
        }
        Err(RepositoryError::Conflict(format!(
            "could not sequence a delivery on {session_id}/{channel}"
        )))
    }

    async fn streams_since(
        &self,
        session_id: &str,
        after_seq: i64,
        until: Option<i64>,
        limit: u64,
        max_payload_bytes: usize,
    ) -> Result<Vec<StreamEnvelope>, RepositoryError> {
        let in_range = || {
            deliveries_after(session_id, after_seq).filter(stream_envelope::Column::Seq.lte(until.unwrap_or(i64::MAX)))
        };
        let rows = newest_that_fit(&self.db, in_range, limit, max_payload_bytes)
            .await
            .map_err(repository_error)?;
        self.envelopes(rows).await
    }

    async fn streams_window_head(
        &self,
        session_id: &str,
        after_seq: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<StreamEnvelope>, RepositoryError> {
        let in_range = || deliveries_after(session_id, after_seq);
        let head = window_head(&self.db, in_range, window, read_bytes)
            .await
            .map_err(repository_error)?;
        Ok(WindowHead {
            items: self.envelopes(head.items).await?,
            cut: head.cut,
            overflowed: head.overflowed,
        })
    }

    async fn last_stream_seq(&self, session_id: &str) -> Result<i64, RepositoryError> {
        let Some(cache) = &self.cache else {
            return self.last_stream_seq_stored(session_id).await;
        };
        if let Some(seq) = cache.last_seq(session_id) {
            return Ok(seq);
        }
        let ticket = cache.ticket(session_id);
        let seq = self.last_stream_seq_stored(session_id).await?;
        cache.keep_last_seq(&ticket, session_id, seq);
        Ok(seq)
    }

    async fn actions_since(
        &self,
        session_id: &str,
        after_sequence: i64,
        limit: u64,
        max_bytes: usize,
    ) -> Result<Vec<ActionEventRecord>, RepositoryError> {
        // A gap drops the oldest, never the latest.
        let in_range = || gestures_after(session_id, after_sequence);
        let rows = newest_that_fit(&self.db, in_range, limit, max_bytes)
            .await
            .map_err(repository_error)?;
        self.actions(rows).await
    }

    async fn actions_window_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<ActionEventRecord>, RepositoryError> {
        let in_range = || gestures_after(session_id, after_sequence);
        let head = window_head(&self.db, in_range, window, read_bytes)
            .await
            .map_err(repository_error)?;
        Ok(WindowHead {
            items: self.actions(head.items).await?,
            cut: head.cut,
            overflowed: head.overflowed,
        })
    }
}
