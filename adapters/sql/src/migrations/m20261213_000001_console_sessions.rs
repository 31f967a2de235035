//! Console sessions (`/console/session`): stored so every replica on the database honours them.
//! Only the sha256 of the cookie's secret is kept.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ConsoleSessions {
    Table,
    TokenHash,
    PrincipalId,
    LockedApp,
    KeyId,
    CsrfToken,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        let time = |column: ConsoleSessions| {
            fit(
                ColumnDef::new(column).timestamp_with_time_zone().not_null().to_owned(),
                b,
            )
        };
        manager
            .create_table(
                Table::create()
                    .table(ConsoleSessions::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(ConsoleSessions::TokenHash)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(ConsoleSessions::PrincipalId).string().not_null())
                    .col(ColumnDef::new(ConsoleSessions::LockedApp).string().null())
                    .col(ColumnDef::new(ConsoleSessions::KeyId).string().null())
                    .col(ColumnDef::new(ConsoleSessions::CsrfToken).string_len(64).not_null())
                    .col(time(ConsoleSessions::CreatedAt))
                    .col(time(ConsoleSessions::ExpiresAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_console_sessions_expires_at")
                    .table(ConsoleSessions::Table)
                    .col(ConsoleSessions::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ConsoleSessions::Table).to_owned())
            .await
    }
}
