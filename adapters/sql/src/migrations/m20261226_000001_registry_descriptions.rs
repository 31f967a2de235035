//! Each registry version's `description` (`registry/descriptions.rs`): the manifest's
//! description in a column of its own, so a search reads it instead of the database extracting
//! it from every hit's manifest. Existing versions are described here, from their manifests.
//!
//! The column is nullable (NULL: not described yet, as a registry of an earlier release writes
//! it) and added only when missing: MySQL commits each `ALTER` itself, so a failure after it must
//! not make every later start fail on a duplicate column.

use sea_orm_migration::prelude::*;

use super::columns::Columns;
use crate::registry::describe_undescribed_versions;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum RegistryArtifactVersions {
    Table,
    Description,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        let c = Columns::new(manager.get_database_backend());
        if !manager
            .has_column(&T::Table.to_string(), T::Description.to_string())
            .await?
        {
            manager
                .alter_table(
                    Table::alter()
                        .table(T::Table)
                        .add_column(c.optional_text(T::Description))
                        .to_owned(),
                )
                .await?;
        }
        describe_undescribed_versions(manager.get_connection()).await.map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        manager
            .alter_table(Table::alter().table(T::Table).drop_column(T::Description).to_owned())
            .await
    }
}
