//! Each version's `description` column (m20261226_000001): the manifest's description, written
//! with the version, so a search answers it from a short column instead of the database parsing
//! every hit's manifest. Versions stored without it (before the migration, or later by a
//! registry of an earlier release during a rolling upgrade) are described here: every one by the
//! migration; afterwards, at a registry's start, those among the versions an earlier release
//! stored (`earlier_releases.rs`), found through the index over `stored_bytes`.

use sea_orm::sea_query::{Expr, ExprTrait, Query, UpdateStatement};
use sea_orm::{ConnectionTrait, DbBackend, DbErr};

use super::entities::artifact_versions::{Column, Entity};

/// Fills in the description of every version stored without one, from its manifest (empty when
/// the manifest has none); answers how many it described. One statement over the whole table:
/// the database reads each manifest once, here, and never again. For the migration; a start
/// uses [`describe_unsized_versions`].
pub async fn describe_undescribed_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let update = describing(db.get_database_backend());
    Ok(db.execute(&update).await?.rows_affected())
}

/// [`describe_undescribed_versions`] among the versions not sized yet (`stored_bytes` NULL,
/// indexed): every version a registry of an earlier release stored is one, and a version is
/// sized only once described, so none is missed and no other row is read.
pub(super) async fn describe_unsized_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let update = describing(db.get_database_backend())
        .and_where(Expr::col(Column::StoredBytes).is_null())
        .to_owned();
    Ok(db.execute(&update).await?.rows_affected())
}

fn describing(backend: DbBackend) -> UpdateStatement {
    Query::update()
        .table(Entity)
        .value(
            Column::Description,
            Expr::cust(format!("COALESCE({}, '')", manifest_description(backend))),
        )
        .and_where(Expr::col(Column::Description).is_null())
        .to_owned()
}

/// The manifest's `description` as text (NULL when it has none), read by the database.
fn manifest_description(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "(\"manifest\" ->> 'description')",
        DbBackend::MySql => "JSON_UNQUOTE(JSON_EXTRACT(`manifest`, '$.description'))",
        _ => "json_extract(\"manifest\", '$.description')",
    }
}
