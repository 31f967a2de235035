//! Per-address rate-limit windows shared by every replica (the pair-code attempt budget).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

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
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(RateWindows::Table)
                    .if_not_exists()
                    .col(c.string(RateWindows::Quota))
                    .col(c.string(RateWindows::Address))
                    // Milliseconds since the epoch: compared as numbers on both backends.
                    .col(c.big(RateWindows::OpenedAtMs))
                    .col(c.fit(ColumnDef::new(RateWindows::Admitted).integer().not_null()))
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
