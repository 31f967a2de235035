//! The registry's search columns (`registry/search_columns.rs`): each version's precedence key,
//! search text and facets, so `GET /search` finds each package's latest version in SQL instead of
//! reading and parsing every version ever published. Existing versions are keyed here
//! (`registry::key_unkeyed_versions`); a version a registry of an earlier release writes later
//! has none until a registry of this release starts (it keys them then).
//!
//! The columns are nullable (NULL: not keyed yet), which every backend can add to a table with
//! rows. Each is added only when missing: SQLite and MySQL run this without a transaction, so a
//! failure after an `ALTER` must not make every later start fail on a duplicate column. On
//! PostgreSQL the precedence key compares in the "C" collation: the keys are hex, which every
//! collation orders alike, but the order must not hang on the database's choice.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::fit;
use crate::registry::key_unkeyed_versions;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum RegistryArtifactVersions {
    Table,
    PrecedenceKey,
    SearchText,
    Facets,
}

const COLUMNS: [RegistryArtifactVersions; 3] = [
    RegistryArtifactVersions::PrecedenceKey,
    RegistryArtifactVersions::SearchText,
    RegistryArtifactVersions::Facets,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        let backend = manager.get_database_backend();
        let table = T::Table.to_string();
        // One column per statement: SQLite alters one at a time.
        for column in COLUMNS {
            if manager.has_column(&table, column.to_string()).await? {
                continue;
            }
            let mut definition = ColumnDef::new(column);
            definition.text().null();
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
        key_unkeyed_versions(manager.get_connection()).await.map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        for column in COLUMNS {
            manager
                .alter_table(Table::alter().table(T::Table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}
