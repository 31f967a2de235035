//! Sign-in with an external OpenID Connect provider: identities linked to accounts, keyed by
//! (issuer, subject), and the sign-ins under way between the redirect and the provider's return.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AccountIdentities {
    Table,
    Issuer,
    Subject,
    UserId,
    CreatedAt,
}

#[derive(DeriveIden)]
enum ExternalSignIns {
    Table,
    StateHash,
    BrowserHash,
    Nonce,
    PkceVerifier,
    RequestJson,
    ClientAddress,
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
                    .table(AccountIdentities::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(AccountIdentities::Issuer).string_len(255).not_null())
                    .col(ColumnDef::new(AccountIdentities::Subject).string_len(255).not_null())
                    .col(ColumnDef::new(AccountIdentities::UserId).string_len(64).not_null())
                    .col(time(
                        ColumnDef::new(AccountIdentities::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                    ))
                    .primary_key(
                        Index::create()
                            .col(AccountIdentities::Issuer)
                            .col(AccountIdentities::Subject),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ExternalSignIns::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(ExternalSignIns::StateHash)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(ExternalSignIns::BrowserHash).string_len(64).not_null())
                    .col(ColumnDef::new(ExternalSignIns::Nonce).string_len(255).not_null())
                    .col(ColumnDef::new(ExternalSignIns::PkceVerifier).string_len(255).not_null())
                    .col(ColumnDef::new(ExternalSignIns::RequestJson).text().not_null())
                    .col(ColumnDef::new(ExternalSignIns::ClientAddress).string_len(64).null())
                    .col(time(
                        ColumnDef::new(ExternalSignIns::ExpiresAt)
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
            .drop_table(Table::drop().table(ExternalSignIns::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(AccountIdentities::Table).to_owned())
            .await
    }
}
