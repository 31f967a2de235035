//! Tables of the OAuth surface: registered clients and authorization codes, shared by replicas.
//! Codes are stored by sha256 hash, with the access token sealed by the code (see
//! `svc_domain::oauth::AuthorizationCode`).

use sea_orm_migration::prelude::*;

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

fn string(name: impl IntoIden, nullable: bool) -> ColumnDef {
    let mut column = ColumnDef::new(name);
    column.string();
    if nullable { column.null() } else { column.not_null() }.to_owned()
}

fn timestamp(name: impl IntoIden, nullable: bool) -> ColumnDef {
    let mut column = ColumnDef::new(name);
    column.timestamp_with_time_zone();
    if nullable { column.null() } else { column.not_null() }.to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(OauthClients::Table)
                    .col(string(OauthClients::ClientId, false).primary_key())
                    .col(string(OauthClients::ClientName, true))
                    .col(ColumnDef::new(OauthClients::RedirectUris).text().not_null())
                    .col(timestamp(OauthClients::CreatedAt, false))
                    .col(string(OauthClients::LastResource, true))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(OauthAuthorizationCodes::Table)
                    .col(string(OauthAuthorizationCodes::CodeHash, false).primary_key())
                    .col(string(OauthAuthorizationCodes::ClientId, false))
                    .col(ColumnDef::new(OauthAuthorizationCodes::RedirectUri).text().not_null())
                    .col(string(OauthAuthorizationCodes::CodeChallenge, false))
                    .col(ColumnDef::new(OauthAuthorizationCodes::Resource).text().null())
                    .col(string(OauthAuthorizationCodes::KeyId, false))
                    .col(string(OauthAuthorizationCodes::KeyOwnerId, false))
                    .col(ColumnDef::new(OauthAuthorizationCodes::SealedToken).text().not_null())
                    .col(timestamp(OauthAuthorizationCodes::IssuedAt, false))
                    .col(timestamp(OauthAuthorizationCodes::ExpiresAt, false))
                    .col(timestamp(OauthAuthorizationCodes::ConsumedAt, true))
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
