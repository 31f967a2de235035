//! Each registry version's release key (`registry/release_keys.rs`): its version without build
//! metadata, unique per package, so two publishes of `1.2.3` and `1.2.3+fix` at the same moment
//! cannot both be stored. Existing versions are keyed first, earliest published first (a twin
//! stored before the index keeps its row under a key of its own), then the index is built.
//!
//! The column is nullable (NULL: not keyed yet, as a registry of an earlier release writes it)
//! and added only when missing: MySQL commits each `ALTER` itself, so a failure after it must not
//! make every later start fail on a duplicate column.

use sea_orm_migration::prelude::*;

use super::columns::Columns;
use crate::registry::{RELEASE_INDEX, key_unreleased_versions};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum RegistryArtifactVersions {
    Table,
    Scope,
    Name,
    ReleaseKey,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        let c = Columns::new(manager.get_database_backend());
        if !manager
            .has_column(&T::Table.to_string(), T::ReleaseKey.to_string())
            .await?
        {
            manager
                .alter_table(
                    Table::alter()
                        .table(T::Table)
                        .add_column(c.optional_string(T::ReleaseKey))
                        .to_owned(),
                )
                .await?;
        }
        key_unreleased_versions(manager.get_connection()).await?;
        if manager.has_index(&T::Table.to_string(), RELEASE_INDEX).await? {
            return Ok(());
        }
        manager
            .create_index(
                Index::create()
                    .name(RELEASE_INDEX)
                    .table(T::Table)
                    .col(T::Scope)
                    .col(T::Name)
                    .col(T::ReleaseKey)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryArtifactVersions as T;
        manager
            .drop_index(Index::drop().name(RELEASE_INDEX).table(T::Table).to_owned())
            .await?;
        manager
            .alter_table(Table::alter().table(T::Table).drop_column(T::ReleaseKey).to_owned())
            .await
    }
}
