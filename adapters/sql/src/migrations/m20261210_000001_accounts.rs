//! Hosted accounts (email and argon2id password hash) and their one-time tokens (email
//! verification, password reset; only the token's sha256 is kept).

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Accounts {
    Table,
    UserId,
    Email,
    EmailKey,
    PasswordHash,
    CreatedAt,
    EmailVerifiedAt,
    FirstSignInAt,
}

#[derive(DeriveIden)]
enum AccountTokens {
    Table,
    TokenHash,
    UserId,
    Purpose,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        let time = |c: ColumnDef| fit(c, b);
        manager
            .create_table(
                Table::create()
                    .table(Accounts::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(Accounts::UserId).string_len(64).not_null().primary_key())
                    .col(ColumnDef::new(Accounts::Email).string_len(254).not_null())
                    .col(ColumnDef::new(Accounts::EmailKey).string_len(254).not_null())
                    .col(ColumnDef::new(Accounts::PasswordHash).string_len(255).not_null())
                    .col(time(
                        ColumnDef::new(Accounts::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                    ))
                    .col(time(
                        ColumnDef::new(Accounts::EmailVerifiedAt)
                            .timestamp_with_time_zone()
                            .null()
                            .to_owned(),
                    ))
                    .col(time(
                        ColumnDef::new(Accounts::FirstSignInAt)
                            .timestamp_with_time_zone()
                            .null()
                            .to_owned(),
                    ))
                    .to_owned(),
            )
            .await?;
        // One account per address, whatever its case: sign-up races end here.
        manager
            .create_index(
                Index::create()
                    .name("accounts_email_key")
                    .table(Accounts::Table)
                    .col(Accounts::EmailKey)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(AccountTokens::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(AccountTokens::TokenHash)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(AccountTokens::UserId).string_len(64).not_null())
                    .col(ColumnDef::new(AccountTokens::Purpose).string_len(32).not_null())
                    .col(time(
                        ColumnDef::new(AccountTokens::ExpiresAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                    ))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AccountTokens::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Accounts::Table).to_owned())
            .await
    }
}
