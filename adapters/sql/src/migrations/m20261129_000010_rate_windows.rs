//! Per-address rate-limit windows shared by every replica (the pair-code attempt budget).

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table};

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
        create_table_if_missing(manager, RateWindows::Table, |table, c| {
            table
                .col(c.string(RateWindows::Quota))
                .col(c.string(RateWindows::Address))
                // Milliseconds since the epoch: compared as numbers on both backends.
                .col(c.big(RateWindows::OpenedAtMs))
                .col(c.fit(ColumnDef::new(RateWindows::Admitted).integer().not_null()))
                .primary_key(Index::create().col(RateWindows::Quota).col(RateWindows::Address));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, RateWindows::Table).await
    }
}
