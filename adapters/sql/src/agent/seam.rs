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

pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

pub fn to_text(value: &Value) -> String {
    value.to_string()
}

pub fn from_text(text: &str) -> Result<Value, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("corrupt JSON column: {e}")))
}
