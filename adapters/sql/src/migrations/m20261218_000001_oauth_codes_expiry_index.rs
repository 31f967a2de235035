//! An index on `oauth_authorization_codes.expires_at`: the code sweep settles the codes that
//! expired unredeemed and deletes the old ones by their expiry, without reading the whole table.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OauthAuthorizationCodes {
    Table,
    ExpiresAt,
}

const INDEX: &str = "ix_oauth_authorization_codes_expires_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(OauthAuthorizationCodes::Table)
                    .col(OauthAuthorizationCodes::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(INDEX)
                    .table(OauthAuthorizationCodes::Table)
                    .to_owned(),
            )
            .await
    }
}
