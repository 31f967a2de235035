//! The artifact registry's tables: versions (metadata and signatures; the payloads live in the
//! bundle store), publishers' author keys, and publisher tokens (sha256 only). They replace the
//! unwired `artifact_versions` table, which was never written.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum RegistryArtifactVersions {
    Table,
    Scope,
    Name,
    Version,
    Kind,
    Visibility,
    Publisher,
    Manifest,
    SignatureAlgorithm,
    SignaturePublicKeyId,
    SignatureValue,
    SigstoreBundle,
    AuthorPublicKey,
    BundleSri,
    Status,
    YankReason,
    PublishedAt,
    YankedAt,
}

#[derive(DeriveIden)]
enum RegistryAuthorKeys {
    Table,
    PublicKeyId,
    PublicKey,
    Publisher,
    CreatedAt,
}

#[derive(DeriveIden)]
enum RegistryTokens {
    Table,
    TokenSha256,
    Publisher,
    Admin,
    CreatedAt,
}

/// The replaced table, recreated by `down` exactly as m20261125_000002 made it.
#[derive(DeriveIden)]
enum ArtifactVersions {
    Table,
    Scope,
    Name,
    Version,
    Kind,
    Visibility,
    Manifest,
    SignatureAlgorithm,
    SignaturePublicKeyId,
    SignatureBundleSha384,
    AuthorPublicKey,
    BundleSri,
    Status,
    PublishedAt,
    YankedAt,
}

fn text(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).string().not_null().to_owned()
}

fn optional_text(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).string().null().to_owned()
}

fn time(name: impl IntoIden, b: DbBackend) -> ColumnDef {
    fit(ColumnDef::new(name).timestamp_with_time_zone().not_null().to_owned(), b)
}

fn optional_time(name: impl IntoIden, b: DbBackend) -> ColumnDef {
    fit(ColumnDef::new(name).timestamp_with_time_zone().null().to_owned(), b)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        manager
            .drop_table(Table::drop().table(ArtifactVersions::Table).if_exists().to_owned())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RegistryArtifactVersions::Table)
                    .col(text(RegistryArtifactVersions::Scope))
                    .col(text(RegistryArtifactVersions::Name))
                    .col(text(RegistryArtifactVersions::Version))
                    .col(text(RegistryArtifactVersions::Kind))
                    .col(text(RegistryArtifactVersions::Visibility))
                    .col(text(RegistryArtifactVersions::Publisher))
                    .col(
                        ColumnDef::new(RegistryArtifactVersions::Manifest)
                            .json_binary()
                            .not_null(),
                    )
                    .col(text(RegistryArtifactVersions::SignatureAlgorithm))
                    .col(optional_text(RegistryArtifactVersions::SignaturePublicKeyId))
                    .col(optional_text(RegistryArtifactVersions::SignatureValue))
                    .col(
                        ColumnDef::new(RegistryArtifactVersions::SigstoreBundle)
                            .json_binary()
                            .null(),
                    )
                    .col(optional_text(RegistryArtifactVersions::AuthorPublicKey))
                    .col(text(RegistryArtifactVersions::BundleSri))
                    .col(text(RegistryArtifactVersions::Status))
                    .col(optional_text(RegistryArtifactVersions::YankReason))
                    .col(time(RegistryArtifactVersions::PublishedAt, b))
                    .col(optional_time(RegistryArtifactVersions::YankedAt, b))
                    .primary_key(
                        Index::create()
                            .col(RegistryArtifactVersions::Scope)
                            .col(RegistryArtifactVersions::Name)
                            .col(RegistryArtifactVersions::Version),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_registry_artifact_versions_kind")
                    .table(RegistryArtifactVersions::Table)
                    .col(RegistryArtifactVersions::Kind)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RegistryAuthorKeys::Table)
                    .col(text(RegistryAuthorKeys::PublicKeyId).primary_key())
                    .col(text(RegistryAuthorKeys::PublicKey))
                    .col(text(RegistryAuthorKeys::Publisher))
                    .col(time(RegistryAuthorKeys::CreatedAt, b))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RegistryTokens::Table)
                    .col(text(RegistryTokens::TokenSha256).primary_key())
                    .col(text(RegistryTokens::Publisher))
                    .col(ColumnDef::new(RegistryTokens::Admin).boolean().not_null())
                    .col(time(RegistryTokens::CreatedAt, b))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        for table in [
            RegistryTokens::Table.into_iden(),
            RegistryAuthorKeys::Table.into_iden(),
            RegistryArtifactVersions::Table.into_iden(),
        ] {
            manager.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(ArtifactVersions::Table)
                    .col(text(ArtifactVersions::Scope))
                    .col(text(ArtifactVersions::Name))
                    .col(text(ArtifactVersions::Version))
                    .col(text(ArtifactVersions::Kind))
                    .col(text(ArtifactVersions::Visibility))
                    .col(ColumnDef::new(ArtifactVersions::Manifest).json_binary().not_null())
                    .col(text(ArtifactVersions::SignatureAlgorithm))
                    .col(text(ArtifactVersions::SignaturePublicKeyId))
                    .col(text(ArtifactVersions::SignatureBundleSha384))
                    .col(text(ArtifactVersions::AuthorPublicKey))
                    .col(optional_text(ArtifactVersions::BundleSri))
                    .col(text(ArtifactVersions::Status))
                    .col(time(ArtifactVersions::PublishedAt, b))
                    .col(optional_time(ArtifactVersions::YankedAt, b))
                    .primary_key(
                        Index::create()
                            .col(ArtifactVersions::Scope)
                            .col(ArtifactVersions::Name)
                            .col(ArtifactVersions::Version),
                    )
                    .to_owned(),
            )
            .await
    }
}
