//! The hosted settings of apps (`svc apps configure`). A row of its own, keyed by app id and not
//! tied to `apps` by a foreign key: a deleted (deprovisioned) app keeps its federation issuer, so
//! a federated caller of it is still verified and told `app_deprovisioned`.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AppHostedSettings {
    Table,
    AppId,
    RateLimitPerMinute,
    EnabledAdapters,
    GrantedCapabilities,
    DefaultShellType,
    AuthMode,
    FederationIssuer,
    JwksUrl,
    DeniedSubjects,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table_if_missing(manager, AppHostedSettings::Table, |table, c| {
            table
                .col(
                    c.fit(
                        ColumnDef::new(AppHostedSettings::AppId)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    ),
                )
                .col(c.fit(ColumnDef::new(AppHostedSettings::RateLimitPerMinute).integer().null()))
                // Lists as JSON arrays in text: the same on every backend.
                .col(c.optional_text(AppHostedSettings::EnabledAdapters))
                .col(c.optional_text(AppHostedSettings::GrantedCapabilities))
                .col(
                    c.fit(
                        ColumnDef::new(AppHostedSettings::DefaultShellType)
                            .string_len(16)
                            .null(),
                    ),
                )
                .col(c.fit(ColumnDef::new(AppHostedSettings::AuthMode).string_len(16).null()))
                .col(c.optional_text(AppHostedSettings::FederationIssuer))
                .col(c.optional_text(AppHostedSettings::JwksUrl))
                .col(c.text(AppHostedSettings::DeniedSubjects))
                .col(c.time(AppHostedSettings::UpdatedAt));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, AppHostedSettings::Table).await
    }
}
