//! Secrets the server generates for itself when the operator configures none (the wsToken
//! signing secret), kept so a restart and every replica on the database sign alike.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ServerSecrets {
    Table,
    Name,
    Value,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(ServerSecrets::Table)
                    .if_not_exists()
                    .col(c.key(ServerSecrets::Name))
                    .col(c.text(ServerSecrets::Value))
                    .col(c.time(ServerSecrets::CreatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ServerSecrets::Table).to_owned())
            .await
    }
}
