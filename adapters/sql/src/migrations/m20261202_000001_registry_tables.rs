//! The artifact registry's tables: versions (metadata and signatures; the payloads live in the
//! bundle store), publishers' author keys, and publisher tokens (sha256 only). They replace the
//! unwired `artifact_versions` table, which was never written.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

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

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
        manager
            .drop_table(Table::drop().table(ArtifactVersions::Table).if_exists().to_owned())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RegistryArtifactVersions::Table)
                    .col(c.string(RegistryArtifactVersions::Scope))
                    .col(c.string(RegistryArtifactVersions::Name))
                    .col(c.string(RegistryArtifactVersions::Version))
                    .col(c.string(RegistryArtifactVersions::Kind))
                    .col(c.string(RegistryArtifactVersions::Visibility))
                    .col(c.string(RegistryArtifactVersions::Publisher))
                    .col(c.json(RegistryArtifactVersions::Manifest))
                    .col(c.string(RegistryArtifactVersions::SignatureAlgorithm))
                    .col(c.optional_string(RegistryArtifactVersions::SignaturePublicKeyId))
                    .col(c.optional_string(RegistryArtifactVersions::SignatureValue))
                    .col(c.optional_json(RegistryArtifactVersions::SigstoreBundle))
                    .col(c.optional_string(RegistryArtifactVersions::AuthorPublicKey))
                    .col(c.string(RegistryArtifactVersions::BundleSri))
                    .col(c.string(RegistryArtifactVersions::Status))
                    .col(c.optional_string(RegistryArtifactVersions::YankReason))
                    .col(c.time(RegistryArtifactVersions::PublishedAt))
                    .col(c.optional_time(RegistryArtifactVersions::YankedAt))
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
                    .col(c.key(RegistryAuthorKeys::PublicKeyId))
                    .col(c.string(RegistryAuthorKeys::PublicKey))
                    .col(c.string(RegistryAuthorKeys::Publisher))
                    .col(c.time(RegistryAuthorKeys::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RegistryTokens::Table)
                    .col(c.key(RegistryTokens::TokenSha256))
                    .col(c.string(RegistryTokens::Publisher))
                    .col(c.flag(RegistryTokens::Admin))
                    .col(c.time(RegistryTokens::CreatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
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
                    .col(c.string(ArtifactVersions::Scope))
                    .col(c.string(ArtifactVersions::Name))
                    .col(c.string(ArtifactVersions::Version))
                    .col(c.string(ArtifactVersions::Kind))
                    .col(c.string(ArtifactVersions::Visibility))
                    .col(c.json(ArtifactVersions::Manifest))
                    .col(c.string(ArtifactVersions::SignatureAlgorithm))
                    .col(c.string(ArtifactVersions::SignaturePublicKeyId))
                    .col(c.string(ArtifactVersions::SignatureBundleSha384))
                    .col(c.string(ArtifactVersions::AuthorPublicKey))
                    .col(c.optional_string(ArtifactVersions::BundleSri))
                    .col(c.string(ArtifactVersions::Status))
                    .col(c.time(ArtifactVersions::PublishedAt))
                    .col(c.optional_time(ArtifactVersions::YankedAt))
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
