//! The pair code in force, one row shared by every replica (was per process).

use sea_orm_migration::prelude::*;

use super::fit;

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
        let b = manager.get_database_backend();
        manager
            .create_table(
                Table::create()
                    .table(PairCodes::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(PairCodes::Id).integer().not_null().primary_key())
                    .col(ColumnDef::new(PairCodes::Code).string().not_null())
                    .col(fit(
                        ColumnDef::new(PairCodes::FirstUsedAt)
                            .timestamp_with_time_zone()
                            .null()
                            .to_owned(),
                        b,
                    ))
                    .col(ColumnDef::new(PairCodes::Version).big_integer().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(PairCodes::Table).to_owned())
            .await
    }
}
