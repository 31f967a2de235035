//! Live events too large for a NOTIFY payload travel through this table (PostgreSQL only uses it).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(Alias::new("live_messages"))
                    .if_not_exists()
                    .col(c.big("id").auto_increment().primary_key())
                    .col(c.text("body"))
                    .col(c.time("created_at"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Alias::new("live_messages")).if_exists().to_owned())
            .await
    }
}
