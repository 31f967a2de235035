//! Provider keys of the hosted plane: one per (owner, provider), sealed. The row holds the
//! ciphertext, the salt it was sealed with and the id of the master key that sealed it, never
//! the key; `last_four` is the only readable part of it.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table};

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
        create_table_if_missing(manager, ProviderKeys::Table, |table, c| {
            table
                .col(c.string(ProviderKeys::PrincipalType))
                .col(c.string(ProviderKeys::PrincipalId))
                .col(c.string(ProviderKeys::Provider))
                .col(c.optional_string(ProviderKeys::Label))
                .col(c.string(ProviderKeys::LastFour))
                .col(c.string(ProviderKeys::MasterKeyId))
                .col(c.string(ProviderKeys::SaltHex))
                // A long provider key outgrows MariaDB's VARCHAR(255) once sealed and hex-encoded.
                .col(c.text(ProviderKeys::CiphertextHex))
                .col(c.time(ProviderKeys::CreatedAt))
                .col(c.optional_time(ProviderKeys::LastUsedAt))
                .primary_key(
                    Index::create()
                        .col(ProviderKeys::PrincipalType)
                        .col(ProviderKeys::PrincipalId)
                        .col(ProviderKeys::Provider),
                );
        })
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
        drop_table(manager, ProviderKeys::Table).await
    }
}
