//! The read paths' statements (`svc_consume`, `svc_get_session`, `resources/read`): built once
//! per backend and run on the backend's own sea-orm driver (on PostgreSQL, on a [`ReadLane`]'s
//! held connections where the repository has one).
//!
//! Two costs were larger than sending the statement and decoding its row (issue 18, on
//! PostgreSQL, BENCHMARKS.md): building the same `SELECT` from sea-query expressions on every
//! read (about 40,000 instructions for the 19 columns of a session), and
//! `DatabaseConnection::query_one_raw`, one future sized for every backend this build carries,
//! wrapped in a span future and copied whole several times per statement (about 75,000
//! instructions of `memcpy`). A [`KeyedRead`] keeps the SQL text a shape builds and binds only
//! its key per call; the driver's own future is boxed once, so the futures that await it stay
//! small. (`errors::begin_write` does the same for SQLite's begin.)

use std::sync::{Arc, OnceLock};

use crate::batched_read::BatchedRead;
use crate::read_lane::ReadLane;

use sea_orm::{
    DatabaseConnection, DatabaseConnectionType, DbBackend, DbErr, QueryResult, Selector, SelectorTrait, Statement,
    Value,
};

/// What a shape is built with in place of its key; found again among the built values.
const KEY_PLACEHOLDER: &str = "\u{0}svc-reads-key\u{0}";

/// A read of at most one row whose statement differs only by one string key (an id).
pub(crate) struct KeyedRead<S: SelectorTrait> {
    build: fn(&str) -> Selector<S>,
    /// Per backend: the statement with the placeholder in the key's place.
    built: [OnceLock<Kept>; 3],
}

struct Kept {
    sql: String,
    values: Vec<Value>,
    /// On PostgreSQL: the statement for the reads of many keys that wait together.
    batched: Option<Arc<BatchedRead>>,
}

impl<S: SelectorTrait> KeyedRead<S> {
    /// `build` makes the read for a key; give it a `LIMIT 1` when more than one row could match.
    pub(crate) const fn new(build: fn(&str) -> Selector<S>) -> Self {
        Self {
            build,
            built: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        }
    }

    /// The row for `key`, decoded; on `lane`'s held connections when there is one.
    pub(crate) async fn one(
        &self,
        db: &DatabaseConnection,
        lane: Option<&ReadLane>,
        key: &str,
    ) -> Result<Option<S::Item>, DbErr> {
        let backend = db.get_database_backend();
        let lane = lane.map(|lane| (lane, self.kept(backend).and_then(|kept| kept.batched.clone())));
        one_row(db, lane, self.statement(backend, key), key)
            .await?
            .map(S::from_raw_query_result)
            .transpose()
    }

    fn statement(&self, backend: DbBackend, key: &str) -> Statement {
        let Some(Kept { sql, values, .. }) = self.kept(backend) else {
            return (self.build)(key).into_statement(backend);
        };
        let values = values.iter().map(|value| match value {
            value if is_placeholder(value) => Value::String(Some(key.to_owned())),
            other => other.clone(),
        });
        Statement::from_sql_and_values(backend, sql.as_str(), values)
    }

    fn kept(&self, backend: DbBackend) -> Option<&Kept> {
        Some(self.built[slot(backend)?].get_or_init(|| {
            let built = (self.build)(KEY_PLACEHOLDER).into_statement(backend);
            let values = built.values.map(|v| v.0).unwrap_or_default();
            let batched = (backend == DbBackend::Postgres)
                .then(|| BatchedRead::of(&built.sql, &values, is_placeholder))
                .flatten()
                .map(Arc::new);
            Kept {
                sql: built.sql,
                values,
                batched,
            }
        }))
    }
}

fn is_placeholder(value: &Value) -> bool {
    matches!(value, Value::String(Some(s)) if s == KEY_PLACEHOLDER)
}

fn slot(backend: DbBackend) -> Option<usize> {
    match backend {
        DbBackend::Sqlite => Some(0),
        DbBackend::Postgres => Some(1),
        DbBackend::MySql => Some(2),
        _ => None,
    }
}

/// The first row `statement` answers, on the connection's own driver, in the span sea-orm gives
/// each statement (target `sea_orm`, so `RUST_LOG=sea_orm=info` shows these reads as well).
async fn one_row(
    db: &DatabaseConnection,
    lane: Option<(&ReadLane, Option<Arc<BatchedRead>>)>,
    statement: Statement,
    key: &str,
) -> Result<Option<QueryResult>, DbErr> {
    let span = tracing::info_span!(
        target: "sea_orm",
        "sea_orm.query_one",
        db.statement = %statement.sql,
        otel.status_code = tracing::field::Empty,
    );
    let answer = match lane {
        Some((lane, batched)) => {
            tracing::Instrument::instrument(Box::pin(lane.one_keyed(&statement, batched, key)), span.clone())
                .await
                .map(|row| row.map(QueryResult::from))
        }
        None => tracing::Instrument::instrument(on_driver(db, statement), span.clone()).await,
    };
    if answer.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    answer
}

async fn on_driver(db: &DatabaseConnection, statement: Statement) -> Result<Option<QueryResult>, DbErr> {
    match &db.inner {
        DatabaseConnectionType::SqlxPostgresPoolConnection(postgres) => Box::pin(postgres.query_one(statement)).await,
        DatabaseConnectionType::SqlxSqlitePoolConnection(sqlite) => Box::pin(sqlite.query_one(statement)).await,
        DatabaseConnectionType::SqlxMySqlPoolConnection(mysql) => Box::pin(mysql.query_one(statement)).await,
        _ => Box::pin(sea_orm::ConnectionTrait::query_one_raw(db, statement)).await,
    }
}

#[cfg(test)]
impl<S: SelectorTrait> KeyedRead<S> {
    /// Panics unless the kept statement is the one the shape builds, for several keys on every
    /// backend (a shape whose SQL text depended on its key could not be kept).
    pub(crate) fn assert_kept_equals_built(&self) {
        for backend in [DbBackend::Sqlite, DbBackend::Postgres, DbBackend::MySql] {
            for key in ["01JSESSION", "another-id", ""] {
                assert_eq!(
                    self.statement(backend, key),
                    (self.build)(key).into_statement(backend),
                    "{backend:?} {key:?}"
                );
            }
        }
    }

    /// Whether reads of this shape that wait together share one statement on PostgreSQL.
    pub(crate) fn batches_on_postgres(&self) -> bool {
        self.kept(DbBackend::Postgres)
            .is_some_and(|kept| kept.batched.is_some())
    }
}

#[cfg(test)]
mod tests {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect, SelectModel};

    use super::*;
    use crate::agent::entities::{action_event, session};

    fn session_by_id(id: &str) -> Selector<SelectModel<session::Model>> {
        session::Entity::find_by_id(id.to_owned()).into_model()
    }

    /// A key in a filter beside a literal and a `LIMIT`, both bound as values too.
    fn gesture_of(id: &str) -> Selector<SelectModel<action_event::Model>> {
        action_event::Entity::find()
            .filter(action_event::Column::SessionId.eq(id))
            .filter(action_event::Column::Intent.ne("svc-reads-other"))
            .limit(1)
            .into_model()
    }

    #[test]
    fn a_kept_statement_is_the_one_its_shape_builds_for_each_key_on_each_backend() {
        KeyedRead::new(session_by_id).assert_kept_equals_built();
        KeyedRead::new(gesture_of).assert_kept_equals_built();
    }

    #[test]
    fn every_kept_read_of_the_repositories_is_the_one_its_shape_builds() {
        crate::agent::sessions::SESSION_BY_ID.assert_kept_equals_built();
        crate::agent::sessions::SESSION_WITH_UNDRAINED.assert_kept_equals_built();
        crate::agent::events::LAST_DELIVERY_SEQ.assert_kept_equals_built();
        crate::agent::events::FIRST_UNDRAINED.assert_kept_equals_built();
        crate::agent::blueprints::BLUEPRINT_BY_ID.assert_kept_equals_built();
    }

    #[test]
    fn every_kept_read_of_the_repositories_shares_statements_on_postgresql() {
        use crate::agent::{blueprints, events, sessions};
        assert!(sessions::SESSION_BY_ID.batches_on_postgres());
        assert!(sessions::SESSION_WITH_UNDRAINED.batches_on_postgres());
        assert!(events::LAST_DELIVERY_SEQ.batches_on_postgres());
        assert!(events::FIRST_UNDRAINED.batches_on_postgres());
        assert!(blueprints::BLUEPRINT_BY_ID.batches_on_postgres());
    }
}
