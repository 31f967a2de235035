//! The registry's search columns (`registry/search_columns.rs`): each version's precedence key,
//! search text and facets, so `GET /search` finds each package's latest version in SQL instead of
//! reading and parsing every version ever published. Existing versions are filled in here, a page
//! at a time, from their stored identity and manifest.
//!
//! On PostgreSQL the precedence key compares in the "C" collation: the keys are hex, which every
//! collation orders alike, but the order must not hang on the database's choice.

use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;
use serde_json::Value;
use svc_domain::artifact::ArtifactIdentity;

use super::fit;
use crate::registry::SearchColumns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum RegistryArtifactVersions {
    Table,
    Scope,
    Name,
    Version,
    Manifest,
    PrecedenceKey,
    SearchText,
    Facets,
}

/// Versions filled in per page.
const PAGE: u64 = 500;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        let backend = manager.get_database_backend();
        // One column per statement: SQLite alters one at a time.
        for column in [T::PrecedenceKey, T::SearchText, T::Facets] {
            let mut definition = ColumnDef::new(column);
            definition.text().not_null().default("");
            if backend == DbBackend::Postgres && matches!(column, T::PrecedenceKey) {
                definition.extra("COLLATE \"C\"");
            }
            manager
                .alter_table(
                    Table::alter()
                        .table(T::Table)
                        .add_column(fit(definition, backend))
                        .to_owned(),
                )
                .await?;
        }
        fill_in(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        for column in [T::PrecedenceKey, T::SearchText, T::Facets] {
            manager
                .alter_table(Table::alter().table(T::Table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}

/// Every version still without a key gets its columns; each page leaves the next unkeyed.
async fn fill_in(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use RegistryArtifactVersions as T;
    let db = manager.get_connection();
    let backend = db.get_database_backend();
    loop {
        let page = Query::select()
            .columns([T::Scope, T::Name, T::Version, T::Manifest])
            .from(T::Table)
            .and_where(Expr::col(T::PrecedenceKey).eq(""))
            .limit(PAGE)
            .to_owned();
        let rows = db.query_all_raw(backend.build(&page)).await?;
        if rows.is_empty() {
            return Ok(());
        }
        for row in &rows {
            let (scope, name, version): (String, String, String) = (
                row.try_get("", "scope")?,
                row.try_get("", "name")?,
                row.try_get("", "version")?,
            );
            let manifest: Value = row.try_get("", "manifest")?;
            let identity = ArtifactIdentity::parse(&scope, &name, &version)
                .map_err(|error| DbErr::Custom(format!("stored version {scope}/{name}@{version}: {error}")))?;
            let columns = SearchColumns::of(&identity, &manifest);
            let update = Query::update()
                .table(T::Table)
                .values([
                    (T::PrecedenceKey, columns.precedence_key.into()),
                    (T::SearchText, columns.search_text.into()),
                    (T::Facets, columns.facets.into()),
                ])
                .and_where(Expr::col(T::Scope).eq(scope))
                .and_where(Expr::col(T::Name).eq(name))
                .and_where(Expr::col(T::Version).eq(version))
                .to_owned();
            manager.exec_stmt(update).await?;
        }
    }
}
