//! Tables of the OAuth surface: registered clients and authorization codes, shared by replicas.
//! Codes are stored by sha256 hash, with the access token sealed by the code (see
//! `svc_domain::oauth::AuthorizationCode`).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OauthClients {
    Table,
    ClientId,
    ClientName,
    /// JSON array of strings, kept verbatim (authorize compares byte for byte).
    RedirectUris,
    CreatedAt,
    LastResource,
}

#[derive(DeriveIden)]
enum OauthAuthorizationCodes {
    Table,
    CodeHash,
    ClientId,
    RedirectUri,
    CodeChallenge,
    Resource,
    KeyId,
    KeyOwnerId,
    SealedToken,
    IssuedAt,
    ExpiresAt,
    ConsumedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(OauthClients::Table)
                    .col(c.key(OauthClients::ClientId))
                    .col(c.optional_string(OauthClients::ClientName))
                    .col(c.text(OauthClients::RedirectUris))
                    .col(c.time(OauthClients::CreatedAt))
                    .col(c.optional_string(OauthClients::LastResource))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(OauthAuthorizationCodes::Table)
                    .col(c.key(OauthAuthorizationCodes::CodeHash))
                    .col(c.string(OauthAuthorizationCodes::ClientId))
                    .col(c.text(OauthAuthorizationCodes::RedirectUri))
                    .col(c.string(OauthAuthorizationCodes::CodeChallenge))
                    .col(c.optional_text(OauthAuthorizationCodes::Resource))
                    .col(c.string(OauthAuthorizationCodes::KeyId))
                    .col(c.string(OauthAuthorizationCodes::KeyOwnerId))
                    .col(c.text(OauthAuthorizationCodes::SealedToken))
                    .col(c.time(OauthAuthorizationCodes::IssuedAt))
                    .col(c.time(OauthAuthorizationCodes::ExpiresAt))
                    .col(c.optional_time(OauthAuthorizationCodes::ConsumedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let codes = Table::drop()
            .table(OauthAuthorizationCodes::Table)
            .if_exists()
            .to_owned();
        manager.drop_table(codes).await?;
        let clients = Table::drop().table(OauthClients::Table).if_exists().to_owned();
        manager.drop_table(clients).await
    }
}
