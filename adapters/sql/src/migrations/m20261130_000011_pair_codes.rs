//! The pair code in force, one row shared by every replica (was per process).

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum PairCodes {
    Table,
    Id,
    Code,
    FirstUsedAt,
    Version,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table_if_missing(manager, PairCodes::Table, |table, c| {
            table
                .col(c.fit(ColumnDef::new(PairCodes::Id).integer().not_null().primary_key()))
                .col(c.string(PairCodes::Code))
                .col(c.optional_time(PairCodes::FirstUsedAt))
                .col(c.big(PairCodes::Version));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, PairCodes::Table).await
    }
}
