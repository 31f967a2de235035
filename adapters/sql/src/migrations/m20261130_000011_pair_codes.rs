//! The pair code in force, one row shared by every replica (was per process).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

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
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(PairCodes::Table)
                    .if_not_exists()
                    .col(c.fit(ColumnDef::new(PairCodes::Id).integer().not_null().primary_key()))
                    .col(c.string(PairCodes::Code))
                    .col(c.optional_time(PairCodes::FirstUsedAt))
                    .col(c.big(PairCodes::Version))
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
