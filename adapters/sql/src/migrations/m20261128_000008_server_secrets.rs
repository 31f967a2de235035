//! Secrets the server generates for itself when the operator configures none (the wsToken
//! signing secret), kept so a restart and every replica on the database sign alike.

use sea_orm_migration::prelude::*;

use super::fit;

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
        let b = manager.get_database_backend();
        manager
            .create_table(
                Table::create()
                    .table(ServerSecrets::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(ServerSecrets::Name).string().not_null().primary_key())
                    .col(fit(
                        ColumnDef::new(ServerSecrets::Value).text().not_null().to_owned(),
                        b,
                    ))
                    .col(fit(
                        ColumnDef::new(ServerSecrets::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                        b,
                    ))
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
