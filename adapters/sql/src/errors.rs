//! The one place where driver errors become `RepositoryError`s, and where write transactions
//! begin, so every repository meets write contention the same way on every backend.

use std::fmt::Display;

use sea_orm::{
    DatabaseConnection, DatabaseConnectionType, DatabaseTransaction, DbErr, SqlErr, SqliteTransactionMode,
    TransactionOptions, TransactionTrait,
};
use svc_application::ports::RepositoryError;

use crate::backend;

/// How often a compare-and-set or a transaction that lost a race is retried before the caller
/// gets a `Conflict`. Each retry re-reads, so it only repeats under sustained contention.
pub(crate) const RACE_ATTEMPTS: usize = 5;

/// A unique-constraint violation, or a transaction that lost a race ([`lost_race`]), is a
/// `Conflict` (callers that retry on it run again); anything else is the store failing.
pub(crate) fn repository_error(error: DbErr) -> RepositoryError {
    match error.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(message)) => RepositoryError::Conflict(message),
        _ if backend::mysql::is_deadlock(&error) => RepositoryError::Conflict(error.to_string()),
        _ => RepositoryError::Unavailable(anyhow::Error::new(error)),
    }
}

pub(crate) fn is_unique_violation(error: &DbErr) -> bool {
    matches!(error.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

/// A transaction that lost a race and may simply run again: a unique index refused the row it
/// computed (another writer took that sequence number first), or the backend chose it as a
/// deadlock victim (MySQL/MariaDB's gap locks).
pub(crate) fn lost_race(error: &DbErr) -> bool {
    is_unique_violation(error) || backend::mysql::is_deadlock(error)
}

/// Begins a write transaction, the only way repositories start one. SQLite takes its write lock
/// at `BEGIN IMMEDIATE`, so concurrent writers queue on the busy timeout set at connect; a
/// deferred transaction would read a snapshot and then fail with `SQLITE_BUSY` when upgrading to
/// write after another writer committed. PostgreSQL and MySQL ignore the option; there the
/// repositories lock the rows they read (`FOR UPDATE`) or compare-and-set.
///
/// SQLite begins on its sqlx pool connection itself, and the other backends' begin is boxed:
/// sea-orm's `DatabaseConnection::begin_with_options` is a future sized for every backend this
/// build carries, and it was copied whole on every SQLite write (36,000 instructions each,
/// issue 18).
pub(crate) async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    if let DatabaseConnectionType::SqlxSqlitePoolConnection(sqlite) = &db.inner {
        return sqlite.begin(None, None, Some(SqliteTransactionMode::Immediate)).await;
    }
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    Box::pin(db.begin_with_options(options)).await
}

/// A stored column the domain cannot read (`column` is `table.column`): the row was written by
/// something else. Typed, so the log and the caller's error name the column.
pub(crate) fn corrupt(column: &'static str, detail: impl Display) -> RepositoryError {
    RepositoryError::Corrupt {
        column,
        reason: detail.to_string(),
    }
}

/// Rows that contradict each other (one vanished inside its own transaction, a reference to a
/// row that is not there): no single column is wrong, the store is.
pub(crate) fn inconsistent(table: &str, detail: impl Display) -> RepositoryError {
    RepositoryError::Unavailable(anyhow::anyhow!("inconsistent {table} rows: {detail}"))
}

/// The conflict answered after [`RACE_ATTEMPTS`] lost races.
pub(crate) fn contention(what: &str) -> RepositoryError {
    RepositoryError::Conflict(format!("{what} kept changing under concurrent writers"))
}
