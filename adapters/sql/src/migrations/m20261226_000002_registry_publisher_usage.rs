//! `registry_publisher_usage`: the bytes each publisher's versions hold (`stored_bytes`), charged
//! as each version is stored (`registry/publisher_usage.rs`) and bounded by
//! `[registry] max_publisher_stored_bytes`. Versions stored before this table count nothing: their
//! bundles live outside the database, so their sizes are not known here.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum RegistryPublisherUsage {
    Table,
    Publisher,
    StoredBytes,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use RegistryPublisherUsage as T;
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(c.key(T::Publisher))
                    .col(c.big(T::StoredBytes))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(
                Table::drop()
                    .table(RegistryPublisherUsage::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}
