//! An index on `external_sign_ins.expires_at`: every sign-in begun at an external provider first
//! clears the abandoned ones (`expires_at < now`), which without it read the whole table on
//! each insert, so the table's size made every new sign-in slower.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ExternalSignIns {
    Table,
    ExpiresAt,
}

const INDEX: &str = "ix_external_sign_ins_expires_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(ExternalSignIns::Table)
                    .col(ExternalSignIns::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(ExternalSignIns::Table).to_owned())
            .await
    }
}
