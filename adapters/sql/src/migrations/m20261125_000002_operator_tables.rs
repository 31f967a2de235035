//! Tables of the operator plane: orgs, memberships, invites, connector keys, coupons, wallets and
//! their ledger, artifact versions, and the mail outbox. Portable types only: string ids,
//! `timestamptz` (text on SQLite), `bigint` cents, JSON (`jsonb` on PostgreSQL).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::fit;
use crate::backend::mysql;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Orgs {
    Table,
    Id,
    Name,
    OwnerUserId,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum OrgMemberships {
    Table,
    OrgId,
    UserId,
    Role,
    JoinedAt,
}

#[derive(DeriveIden)]
enum OrgInvites {
    Table,
    Id,
    OrgId,
    Email,
    Role,
    InviterUserId,
    Status,
    ExpiresAt,
    CreatedAt,
    AcceptedAt,
    AcceptedByUserId,
    RevokedAt,
}

#[derive(DeriveIden)]
enum ConnectorKeys {
    Table,
    Id,
    OwnerUserId,
    AppId,
    Name,
    ApiKeyPrefix,
    KeyHash,
    Status,
    CreatedAt,
    LastUsedAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum Coupons {
    Table,
    Code,
    CreditCents,
    Status,
    CreatedAt,
    ExpiresAt,
    ActivatedAt,
    RedeemedByPrincipalType,
    RedeemedByPrincipalId,
}

#[derive(DeriveIden)]
enum Wallets {
    Table,
    PrincipalType,
    PrincipalId,
    BalanceCents,
    LifetimeGrantedCents,
    LifetimeSpentCents,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum LedgerEntries {
    Table,
    Seq,
    TransactionId,
    PrincipalType,
    PrincipalId,
    Kind,
    DeltaCents,
    BalanceAfterCents,
    Reason,
    CreatedAt,
    RelatedSessionId,
}

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

#[derive(DeriveIden)]
enum MailOutbox {
    Table,
    Id,
    Kind,
    Recipient,
    Payload,
    CreatedAt,
    SentAt,
}

fn id(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).string().not_null().to_owned()
}

fn text(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).string().not_null().to_owned()
}

fn optional_text(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).string().null().to_owned()
}

fn time(name: impl IntoIden, backend: DbBackend) -> ColumnDef {
    fit(
        ColumnDef::new(name).timestamp_with_time_zone().not_null().to_owned(),
        backend,
    )
}

fn optional_time(name: impl IntoIden, backend: DbBackend) -> ColumnDef {
    fit(
        ColumnDef::new(name).timestamp_with_time_zone().null().to_owned(),
        backend,
    )
}

fn cents(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).big_integer().not_null().to_owned()
}

fn index(name: &str) -> IndexCreateStatement {
    Index::create().name(name).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        manager
            .create_table(
                Table::create()
                    .table(Orgs::Table)
                    .col(id(Orgs::Id).primary_key())
                    .col(text(Orgs::Name))
                    .col(id(Orgs::OwnerUserId))
                    .col(time(Orgs::CreatedAt, b))
                    .col(time(Orgs::UpdatedAt, b))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(OrgMemberships::Table)
                    .col(id(OrgMemberships::OrgId))
                    .col(id(OrgMemberships::UserId))
                    .col(text(OrgMemberships::Role))
                    .col(time(OrgMemberships::JoinedAt, b))
                    .primary_key(Index::create().col(OrgMemberships::OrgId).col(OrgMemberships::UserId))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_org_memberships_org")
                            .from(OrgMemberships::Table, OrgMemberships::OrgId)
                            .to(Orgs::Table, Orgs::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                index("ix_org_memberships_user")
                    .table(OrgMemberships::Table)
                    .col(OrgMemberships::UserId)
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(OrgInvites::Table)
                    .col(id(OrgInvites::Id).primary_key())
                    .col(id(OrgInvites::OrgId))
                    .col(text(OrgInvites::Email))
                    .col(text(OrgInvites::Role))
                    .col(id(OrgInvites::InviterUserId))
                    .col(text(OrgInvites::Status))
                    .col(time(OrgInvites::ExpiresAt, b))
                    .col(time(OrgInvites::CreatedAt, b))
                    .col(optional_time(OrgInvites::AcceptedAt, b))
                    .col(optional_text(OrgInvites::AcceptedByUserId))
                    .col(optional_time(OrgInvites::RevokedAt, b))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_org_invites_org")
                            .from(OrgInvites::Table, OrgInvites::OrgId)
                            .to(Orgs::Table, Orgs::Id),
                    )
                    .to_owned(),
            )
            .await?;
        // At most one pending invite per (org, email): racing inviters end up sharing one row.
        // A partial index is spelled the same on SQLite and PostgreSQL; MySQL has its own form.
        let statements = match b {
            DbBackend::MySql => mysql::partial_unique_index(
                "ux_org_invites_pending",
                "org_invites",
                "pending_email",
                "CASE WHEN status = 'pending' THEN email END",
                "org_id, pending_email",
            )
            .to_vec(),
            _ => vec![
                "CREATE UNIQUE INDEX ux_org_invites_pending ON org_invites (org_id, email) WHERE status = 'pending'"
                    .to_owned(),
            ],
        };
        for statement in statements {
            manager.get_connection().execute_unprepared(&statement).await?;
        }

        manager
            .create_table(
                Table::create()
                    .table(ConnectorKeys::Table)
                    .col(id(ConnectorKeys::Id).primary_key())
                    .col(id(ConnectorKeys::OwnerUserId))
                    .col(optional_text(ConnectorKeys::AppId))
                    .col(optional_text(ConnectorKeys::Name))
                    .col(text(ConnectorKeys::ApiKeyPrefix))
                    .col(text(ConnectorKeys::KeyHash).unique_key())
                    .col(text(ConnectorKeys::Status))
                    .col(time(ConnectorKeys::CreatedAt, b))
                    .col(optional_time(ConnectorKeys::LastUsedAt, b))
                    .col(optional_time(ConnectorKeys::ExpiresAt, b))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                index("ix_connector_keys_owner")
                    .table(ConnectorKeys::Table)
                    .col(ConnectorKeys::OwnerUserId)
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Coupons::Table)
                    .col(id(Coupons::Code).primary_key())
                    .col(cents(Coupons::CreditCents))
                    .col(text(Coupons::Status))
                    .col(time(Coupons::CreatedAt, b))
                    .col(optional_time(Coupons::ExpiresAt, b))
                    .col(optional_time(Coupons::ActivatedAt, b))
                    .col(optional_text(Coupons::RedeemedByPrincipalType))
                    .col(optional_text(Coupons::RedeemedByPrincipalId))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Wallets::Table)
                    .col(text(Wallets::PrincipalType))
                    .col(id(Wallets::PrincipalId))
                    .col(cents(Wallets::BalanceCents))
                    .col(cents(Wallets::LifetimeGrantedCents))
                    .col(cents(Wallets::LifetimeSpentCents))
                    .col(time(Wallets::UpdatedAt, b))
                    .primary_key(Index::create().col(Wallets::PrincipalType).col(Wallets::PrincipalId))
                    // The domain keeps these; the database refuses a write that would break them.
                    .check(Expr::col(Wallets::BalanceCents).gte(0))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(LedgerEntries::Table)
                    .col(
                        ColumnDef::new(LedgerEntries::Seq)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(id(LedgerEntries::TransactionId).unique_key())
                    .col(text(LedgerEntries::PrincipalType))
                    .col(id(LedgerEntries::PrincipalId))
                    .col(text(LedgerEntries::Kind))
                    .col(cents(LedgerEntries::DeltaCents))
                    .col(cents(LedgerEntries::BalanceAfterCents))
                    .col(text(LedgerEntries::Reason))
                    .col(time(LedgerEntries::CreatedAt, b))
                    .col(optional_text(LedgerEntries::RelatedSessionId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                index("ix_ledger_entries_principal_seq")
                    .table(LedgerEntries::Table)
                    .col(LedgerEntries::PrincipalType)
                    .col(LedgerEntries::PrincipalId)
                    .col(LedgerEntries::Seq)
                    .to_owned(),
            )
            .await?;

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
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(MailOutbox::Table)
                    .col(id(MailOutbox::Id).primary_key())
                    .col(text(MailOutbox::Kind))
                    .col(text(MailOutbox::Recipient))
                    .col(ColumnDef::new(MailOutbox::Payload).json_binary().not_null())
                    .col(time(MailOutbox::CreatedAt, b))
                    .col(optional_time(MailOutbox::SentAt, b))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            MailOutbox::Table.into_iden(),
            ArtifactVersions::Table.into_iden(),
            LedgerEntries::Table.into_iden(),
            Wallets::Table.into_iden(),
            Coupons::Table.into_iden(),
            ConnectorKeys::Table.into_iden(),
            OrgInvites::Table.into_iden(),
            OrgMemberships::Table.into_iden(),
            Orgs::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).if_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}
