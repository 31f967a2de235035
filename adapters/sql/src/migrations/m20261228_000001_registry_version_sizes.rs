//! Each registry version's `stored_bytes` (`registry/version_sizes.rs`): what it costs its
//! publisher, written with the version. NULL marks a version a registry of an earlier release
//! stored, which a registry of this release fills in (with its other columns) when it starts
//! (`registry/earlier_releases.rs`); the index over the column makes that look one probe when
//! none is left. Sizes need the bundle files, which live outside the database: none is filled
//! in here.
//!
//! Also indexes `bundle_sri`: a refused publish asks whether a stored version shares its bundle
//! before removing it.
//!
//! The column is nullable and added only when missing, and each index only when missing: MySQL
//! commits each `ALTER` itself, so a failure after it must not make every later start fail.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum RegistryArtifactVersions {
    Table,
    StoredBytes,
    BundleSri,
}

const SIZE_INDEX: &str = "ix_registry_artifact_versions_stored_bytes";
const BUNDLE_INDEX: &str = "ix_registry_artifact_versions_bundle_sri";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        let c = Columns::new(manager.get_database_backend());
        let table = T::Table.to_string();
        if !manager.has_column(&table, T::StoredBytes.to_string()).await? {
            manager
                .alter_table(
                    Table::alter()
                        .table(T::Table)
                        .add_column(c.optional_big(T::StoredBytes))
                        .to_owned(),
                )
                .await?;
        }
        for (index, column) in [(SIZE_INDEX, T::StoredBytes), (BUNDLE_INDEX, T::BundleSri)] {
            if !manager.has_index(&table, index).await? {
                manager
                    .create_index(Index::create().name(index).table(T::Table).col(column).to_owned())
                    .await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        for index in [SIZE_INDEX, BUNDLE_INDEX] {
            manager
                .drop_index(Index::drop().name(index).table(T::Table).to_owned())
                .await?;
        }
        manager
            .alter_table(Table::alter().table(T::Table).drop_column(T::StoredBytes).to_owned())
            .await
    }
}
