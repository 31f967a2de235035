//! Tables of the operator plane: orgs, memberships, invites, connector keys, coupons, wallets and
//! their ledger, artifact versions, and the mail outbox. Portable types only: string ids,
//! `timestamptz` (text on SQLite), `bigint` cents, JSON (`jsonb` on PostgreSQL).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::columns::Columns;
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

fn index(name: &str) -> IndexCreateStatement {
    Index::create().name(name).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        let c = Columns::new(b);
        manager
            .create_table(
                Table::create()
                    .table(Orgs::Table)
                    .col(c.key(Orgs::Id))
                    .col(c.string(Orgs::Name))
                    .col(c.string(Orgs::OwnerUserId))
                    .col(c.time(Orgs::CreatedAt))
                    .col(c.time(Orgs::UpdatedAt))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(OrgMemberships::Table)
                    .col(c.string(OrgMemberships::OrgId))
                    .col(c.string(OrgMemberships::UserId))
                    .col(c.string(OrgMemberships::Role))
                    .col(c.time(OrgMemberships::JoinedAt))
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
                    .col(c.key(OrgInvites::Id))
                    .col(c.string(OrgInvites::OrgId))
                    .col(c.string(OrgInvites::Email))
                    .col(c.string(OrgInvites::Role))
                    .col(c.string(OrgInvites::InviterUserId))
                    .col(c.string(OrgInvites::Status))
                    .col(c.time(OrgInvites::ExpiresAt))
                    .col(c.time(OrgInvites::CreatedAt))
                    .col(c.optional_time(OrgInvites::AcceptedAt))
                    .col(c.optional_string(OrgInvites::AcceptedByUserId))
                    .col(c.optional_time(OrgInvites::RevokedAt))
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
                    .col(c.key(ConnectorKeys::Id))
                    .col(c.string(ConnectorKeys::OwnerUserId))
                    .col(c.optional_string(ConnectorKeys::AppId))
                    .col(c.optional_string(ConnectorKeys::Name))
                    .col(c.string(ConnectorKeys::ApiKeyPrefix))
                    .col(c.string(ConnectorKeys::KeyHash).unique_key())
                    .col(c.string(ConnectorKeys::Status))
                    .col(c.time(ConnectorKeys::CreatedAt))
                    .col(c.optional_time(ConnectorKeys::LastUsedAt))
                    .col(c.optional_time(ConnectorKeys::ExpiresAt))
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
                    .col(c.key(Coupons::Code))
                    .col(c.big(Coupons::CreditCents))
                    .col(c.string(Coupons::Status))
                    .col(c.time(Coupons::CreatedAt))
                    .col(c.optional_time(Coupons::ExpiresAt))
                    .col(c.optional_time(Coupons::ActivatedAt))
                    .col(c.optional_string(Coupons::RedeemedByPrincipalType))
                    .col(c.optional_string(Coupons::RedeemedByPrincipalId))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Wallets::Table)
                    .col(c.string(Wallets::PrincipalType))
                    .col(c.string(Wallets::PrincipalId))
                    .col(c.big(Wallets::BalanceCents))
                    .col(c.big(Wallets::LifetimeGrantedCents))
                    .col(c.big(Wallets::LifetimeSpentCents))
                    .col(c.time(Wallets::UpdatedAt))
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
                    .col(c.big(LedgerEntries::Seq).auto_increment().primary_key())
                    .col(c.string(LedgerEntries::TransactionId).unique_key())
                    .col(c.string(LedgerEntries::PrincipalType))
                    .col(c.string(LedgerEntries::PrincipalId))
                    .col(c.string(LedgerEntries::Kind))
                    .col(c.big(LedgerEntries::DeltaCents))
                    .col(c.big(LedgerEntries::BalanceAfterCents))
                    .col(c.string(LedgerEntries::Reason))
                    .col(c.time(LedgerEntries::CreatedAt))
                    .col(c.optional_string(LedgerEntries::RelatedSessionId))
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
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(MailOutbox::Table)
                    .col(c.key(MailOutbox::Id))
                    .col(c.string(MailOutbox::Kind))
                    .col(c.string(MailOutbox::Recipient))
                    .col(c.json(MailOutbox::Payload))
                    .col(c.time(MailOutbox::CreatedAt))
                    .col(c.optional_time(MailOutbox::SentAt))
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
