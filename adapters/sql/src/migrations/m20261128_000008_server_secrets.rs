//! Secrets the server generates for itself when the operator configures none (the wsToken
//! signing secret), kept so a restart and every replica on the database sign alike.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table};

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
        create_table_if_missing(manager, ServerSecrets::Table, |table, c| {
            table
                .col(c.key(ServerSecrets::Name))
                .col(c.text(ServerSecrets::Value))
                .col(c.time(ServerSecrets::CreatedAt));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, ServerSecrets::Table).await
    }
}
