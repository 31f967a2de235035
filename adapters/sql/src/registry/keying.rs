//! Fills in the search columns of versions stored without them: every version, once, when the
//! migration that added the columns runs; afterwards, at a registry's start, any version that a
//! registry of an earlier release published after that migration (during a rolling upgrade).

use sea_orm::sea_query::{Expr, ExprTrait, Query, SelectStatement};
use sea_orm::{ConnectionTrait, DbErr, QueryResult};
use serde_json::Value;

use super::entities::artifact_versions::{Column, Entity};
use super::search_columns::SearchColumns;

/// Versions keyed per page, so a large registry is never held in memory at once.
const PAGE: u64 = 500;

/// Keys every version whose precedence key is missing; answers how many it keyed.
pub async fn key_unkeyed_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let unkeyed = Query::select()
        .columns([Column::Scope, Column::Name, Column::Version, Column::Manifest])
        .from(Entity)
        .and_where(Expr::col(Column::PrecedenceKey).is_null())
        .to_owned();
    let mut keyed = 0;
    loop {
        let rows = next_page(db, &unkeyed).await?;
        if rows.is_empty() {
            return Ok(keyed);
        }
        for row in &rows {
            let (scope, name, version) = stored_identity(row)?;
            // A manifest that does not read back as JSON is found by scope and name only.
            let manifest: Value = row.try_get("", "manifest").unwrap_or(Value::Null);
            let columns = SearchColumns::of_stored(&scope, &name, &version, &manifest);
            let update = Query::update()
                .table(Entity)
                .values([
                    (Column::PrecedenceKey, columns.precedence_key.into()),
                    (Column::SearchText, columns.search_text.into()),
                    (Column::Facets, columns.facets.into()),
                ])
                .and_where(Expr::col(Column::Scope).eq(scope))
                .and_where(Expr::col(Column::Name).eq(name))
                .and_where(Expr::col(Column::Version).eq(version))
                .to_owned();
            db.execute_raw(backend.build(&update)).await?;
            keyed += 1;
        }
    }
}

/// The next page of the rows `unkeyed` selects. Keying a row must take it out of the selection
/// (fill in the column it looks for), so each page is the next one and a loop over pages ends.
pub(super) async fn next_page<C: ConnectionTrait>(
    db: &C,
    unkeyed: &SelectStatement,
) -> Result<Vec<QueryResult>, DbErr> {
    let page = unkeyed.clone().limit(PAGE).to_owned();
    db.query_all_raw(db.get_database_backend().build(&page)).await
}

/// The (scope, name, version) of a selected row.
pub(super) fn stored_identity(row: &QueryResult) -> Result<(String, String, String), DbErr> {
    Ok((
        row.try_get("", "scope")?,
        row.try_get("", "name")?,
        row.try_get("", "version")?,
    ))
}
