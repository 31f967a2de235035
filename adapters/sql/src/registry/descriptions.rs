//! Each version's `description` column (m20261226_000001): the manifest's description, written
//! with the version, so a search answers it from a short column instead of the database parsing
//! every hit's manifest. Versions stored without it (before the migration, or later by a
//! registry of an earlier release during a rolling upgrade) are described here, by the migration
//! and again at each registry's start.

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DbBackend, DbErr};

use super::entities::artifact_versions::{Column, Entity};

/// Fills in the description of every version stored without one, from its manifest (empty when
/// the manifest has none); answers how many it described. One statement: the database reads
/// each manifest once, here, and never again.
pub async fn describe_undescribed_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let update = Query::update()
        .table(Entity)
        .value(
            Column::Description,
            Expr::cust(format!("COALESCE({}, '')", manifest_description(backend))),
        )
        .and_where(Expr::col(Column::Description).is_null())
        .to_owned();
    Ok(db.execute_raw(backend.build(&update)).await?.rows_affected())
}

/// The manifest's `description` as text (NULL when it has none), read by the database.
fn manifest_description(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "(\"manifest\" ->> 'description')",
        DbBackend::MySql => "JSON_UNQUOTE(JSON_EXTRACT(`manifest`, '$.description'))",
        _ => "json_extract(\"manifest\", '$.description')",
    }
}
