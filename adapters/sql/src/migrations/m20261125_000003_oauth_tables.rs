//! Tables of the OAuth surface: registered clients and authorization codes, shared by replicas.
//! Codes are stored by sha256 hash, with the access token sealed by the code (see
//! `svc_domain::oauth::AuthorizationCode`).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::fit;

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

fn timestamp(name: impl IntoIden, nullable: bool, backend: DbBackend) -> ColumnDef {
    let mut column = ColumnDef::new(name);
    column.timestamp_with_time_zone();
    fit(
        if nullable { column.null() } else { column.not_null() }.to_owned(),
        backend,
    )
}

fn long_text(name: impl IntoIden, nullable: bool, backend: DbBackend) -> ColumnDef {
    let mut column = ColumnDef::new(name);
    column.text();
    fit(
        if nullable { column.null() } else { column.not_null() }.to_owned(),
        backend,
    )
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        manager
            .create_table(
                Table::create()
                    .table(OauthClients::Table)
                    .col(string(OauthClients::ClientId, false).primary_key())
                    .col(string(OauthClients::ClientName, true))
                    .col(long_text(OauthClients::RedirectUris, false, b))
                    .col(timestamp(OauthClients::CreatedAt, false, b))
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
                    .col(long_text(OauthAuthorizationCodes::RedirectUri, false, b))
                    .col(string(OauthAuthorizationCodes::CodeChallenge, false))
                    .col(long_text(OauthAuthorizationCodes::Resource, true, b))
                    .col(string(OauthAuthorizationCodes::KeyId, false))
                    .col(string(OauthAuthorizationCodes::KeyOwnerId, false))
                    .col(long_text(OauthAuthorizationCodes::SealedToken, false, b))
                    .col(timestamp(OauthAuthorizationCodes::IssuedAt, false, b))
                    .col(timestamp(OauthAuthorizationCodes::ExpiresAt, false, b))
                    .col(timestamp(OauthAuthorizationCodes::ConsumedAt, true, b))
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
