//! Where driver errors become `RepositoryError`s and JSON columns become values.

use sea_orm::{DbErr, SqlErr};
use serde_json::Value;
use svc_application::ports::RepositoryError;

pub fn db(e: DbErr) -> RepositoryError {
    match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(msg)) => RepositoryError::Conflict(msg),
        _ => RepositoryError::Unavailable(e.into()),
    }
}

/// SQLite's "database is locked" (`SQLITE_BUSY`, also its `BUSY_SNAPSHOT` form): a transaction
/// that read first cannot become a writer once another connection has committed since, and the
/// busy timeout does not apply to that upgrade. The whole transaction is safe to run again.
pub fn is_busy(e: &DbErr) -> bool {
    let text = e.to_string();
    text.contains("database is locked") || text.contains("(code: 5)") || text.contains("(code: 517)")
}

/// A short pause before running a transaction again after [`is_busy`]; grows with `attempt`.
pub async fn busy_pause(attempt: usize) {
    let jitter = u64::from(std::process::id() % 7) + (attempt as u64 * 3);
    tokio::time::sleep(std::time::Duration::from_millis(5 * (attempt as u64 + 1) + jitter)).await;
}

pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

pub fn to_text(value: &Value) -> String {
    value.to_string()
}

pub fn from_text(text: &str) -> Result<Value, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("corrupt JSON column: {e}")))
}
