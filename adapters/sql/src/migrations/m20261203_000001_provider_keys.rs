//! Provider keys of the hosted plane: one per (owner, provider), sealed. The row holds the
//! ciphertext, the salt it was sealed with and the id of the master key that sealed it, never
//! the key; `last_four` is the only readable part of it.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ProviderKeys {
    Table,
    PrincipalType,
    PrincipalId,
    Provider,
    Label,
    LastFour,
    MasterKeyId,
    SaltHex,
    CiphertextHex,
    CreatedAt,
    LastUsedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        let text = |c: ProviderKeys| ColumnDef::new(c).string().not_null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(ProviderKeys::Table)
                    .if_not_exists()
                    .col(text(ProviderKeys::PrincipalType))
                    .col(text(ProviderKeys::PrincipalId))
                    .col(text(ProviderKeys::Provider))
                    .col(ColumnDef::new(ProviderKeys::Label).string().null())
                    .col(text(ProviderKeys::LastFour))
                    .col(text(ProviderKeys::MasterKeyId))
                    .col(text(ProviderKeys::SaltHex))
                    // A long provider key outgrows MariaDB's VARCHAR(255) once sealed and hex-encoded.
                    .col(fit(
                        ColumnDef::new(ProviderKeys::CiphertextHex).text().not_null().to_owned(),
                        b,
                    ))
                    .col(fit(
                        ColumnDef::new(ProviderKeys::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                        b,
                    ))
                    .col(fit(
                        ColumnDef::new(ProviderKeys::LastUsedAt)
                            .timestamp_with_time_zone()
                            .null()
                            .to_owned(),
                        b,
                    ))
                    .primary_key(
                        Index::create()
                            .col(ProviderKeys::PrincipalType)
                            .col(ProviderKeys::PrincipalId)
                            .col(ProviderKeys::Provider),
                    )
                    .to_owned(),
            )
            .await?;
        // `svc hosted rotate-master-key` reads the rows not under the current master key.
        manager
            .create_index(
                Index::create()
                    .name("provider_keys_master_key_id")
                    .table(ProviderKeys::Table)
                    .col(ProviderKeys::MasterKeyId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ProviderKeys::Table).to_owned())
            .await
    }
}
