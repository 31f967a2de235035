//! An index on `account_tokens.expires_at`: the server's sweep deletes the tokens past their
//! expiry by it, reading (and on MariaDB locking) only those rows, not the whole table.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AccountTokens {
    Table,
    ExpiresAt,
}

const INDEX: &str = "ix_account_tokens_expires_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(AccountTokens::Table)
                    .col(AccountTokens::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(AccountTokens::Table).to_owned())
            .await
    }
}
