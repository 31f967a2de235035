//! Transactions and error mapping shared by the operator repositories.

use std::fmt::Display;

use sea_orm::{
    DatabaseConnection, DatabaseTransaction, DbErr, SqlErr, SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use svc_application::ports::RepositoryError;

/// How often a compare-and-set or a transaction that lost a race is retried before the caller
/// gets a `Conflict`. Each retry re-reads, so it only repeats under sustained contention.
pub(crate) const RACE_ATTEMPTS: usize = 5;

/// Begins a write transaction. SQLite takes its write lock at `BEGIN IMMEDIATE`, so concurrent
/// writers wait on the busy timeout; a deferred transaction would read a snapshot and then fail
/// with `SQLITE_BUSY` when upgrading to write after another writer committed. PostgreSQL
/// ignores the option; there the repositories lock the rows they read.
pub(crate) async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, RepositoryError> {
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    db.begin_with_options(options).await.map_err(repository_error)
}

/// A unique-constraint violation is a `Conflict`; anything else is the store failing.
pub(crate) fn repository_error(error: DbErr) -> RepositoryError {
    match error.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(message)) => RepositoryError::Conflict(message),
        _ => RepositoryError::Unavailable(anyhow::Error::new(error)),
    }
}

/// A stored value the domain does not recognise: the row was written by something else.
pub(crate) fn corrupt(table: &str, detail: impl Display) -> RepositoryError {
    RepositoryError::Unavailable(anyhow::anyhow!("unreadable {table} row: {detail}"))
}

/// The conflict answered after [`RACE_ATTEMPTS`] lost races.
pub(crate) fn contention(what: &str) -> RepositoryError {
    RepositoryError::Conflict(format!("{what} kept changing under concurrent writers"))
}
