//! A session row decoded straight from PostgreSQL's row.
//!
//! sea-orm's derived decoding asks for every column through its own layers, and reports each NULL
//! it meets as an error whose text it formats (then reads as `None`): a session has up to five
//! NULL columns, and on replicas every session tool reads one (issue 18: a third of a session
//! read's decoding). Here each column is asked of sqlx by name, NULLs read as `None` directly;
//! other backends keep sea-orm's decoding (SQLite's reads are kept in memory).

use sea_orm::sqlx::Row;
use sea_orm::sqlx::postgres::PgRow;
use sea_orm::{DbErr, FromQueryResult, Iden, QueryResult};

use super::entities::session::{Column, Model};

/// A [`Model`] that decodes itself without sea-orm's per-column layers on PostgreSQL.
pub(crate) struct SessionRow(pub Model);

impl FromQueryResult for SessionRow {
    fn from_query_result(row: &QueryResult, pre: &str) -> Result<Self, DbErr> {
        match row.try_as_pg_row() {
            Some(pg) if pre.is_empty() => decoded(pg).map(Self).map_err(|e| DbErr::Type(e.to_string())),
            _ => Model::from_query_result(row, pre).map(Self),
        }
    }
}

fn decoded(row: &PgRow) -> Result<Model, sea_orm::sqlx::Error> {
    Ok(Model {
        session_id: row.try_get(Column::SessionId.unquoted())?,
        app_id: row.try_get(Column::AppId.unquoted())?,
        intent: row.try_get(Column::Intent.unquoted())?,
        blueprint_id: row.try_get(Column::BlueprintId.unquoted())?,
        contract: row.try_get(Column::Contract.unquoted())?,
        theme_id: row.try_get(Column::ThemeId.unquoted())?,
        status: row.try_get(Column::Status.unquoted())?,
        epoch: row.try_get(Column::Epoch.unquoted())?,
        props: row.try_get(Column::Props.unquoted())?,
        last_activity_at: row.try_get(Column::LastActivityAt.unquoted())?,
        ttl_seconds: row.try_get(Column::TtlSeconds.unquoted())?,
        failure_code: row.try_get(Column::FailureCode.unquoted())?,
        failure_message: row.try_get(Column::FailureMessage.unquoted())?,
        host_name: row.try_get(Column::HostName.unquoted())?,
        host_session_id: row.try_get(Column::HostSessionId.unquoted())?,
        context_snapshot: row.try_get(Column::ContextSnapshot.unquoted())?,
        event_sequence: row.try_get(Column::EventSequence.unquoted())?,
        created_at: row.try_get(Column::CreatedAt.unquoted())?,
        revision: row.try_get(Column::Revision.unquoted())?,
        expires_at: row.try_get(Column::ExpiresAt.unquoted())?,
    })
}
