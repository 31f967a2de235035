//! Indexes console sessions by principal and creation: the per-account session cap
//! (`hosted.console_sessions_per_account`) reads an account's open sessions, oldest first, at
//! every sign-in, under the account's write guard; without it that read scanned every unexpired
//! session of every account.
//!
//! Created only when missing: MySQL commits each DDL statement itself, so a failure after it
//! must not make every later start fail.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ConsoleSessions {
    Table,
    PrincipalId,
    CreatedAt,
}

const INDEX: &str = "ix_console_sessions_principal_created";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ConsoleSessions as T;
        if manager.has_index(T::Table.to_string(), INDEX).await? {
            return Ok(());
        }
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(T::Table)
                    .col(T::PrincipalId)
                    .col(T::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(ConsoleSessions::Table).to_owned())
            .await
    }
}
