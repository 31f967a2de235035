//! Repositories of the OAuth surface: registered clients and authorization codes, in the same
//! database as everything else, so any replica can finish a flow another one started.

mod clients;
mod codes;
mod entities;

use sea_orm::{DbErr, SqlErr};
use svc_application::ports::RepositoryError;

pub use clients::SeaOrmOAuthClientRepository;
pub use codes::SeaOrmAuthorizationCodeRepository;

fn repository_error(error: DbErr) -> RepositoryError {
    match error.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(message)) => RepositoryError::Conflict(message),
        _ => RepositoryError::Unavailable(anyhow::Error::new(error)),
    }
}
