//! Per-address rate-limit windows shared by every replica (the pair-code attempt budget).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum RateWindows {
    Table,
    Quota,
    Address,
    OpenedAtMs,
    Admitted,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(RateWindows::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(RateWindows::Quota).string().not_null())
                    .col(ColumnDef::new(RateWindows::Address).string().not_null())
                    // Milliseconds since the epoch: compared as numbers on both backends.
                    .col(ColumnDef::new(RateWindows::OpenedAtMs).big_integer().not_null())
                    .col(ColumnDef::new(RateWindows::Admitted).integer().not_null())
                    .primary_key(Index::create().col(RateWindows::Quota).col(RateWindows::Address))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(RateWindows::Table).to_owned())
            .await
    }
}
