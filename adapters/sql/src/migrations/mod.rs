//! One migration per file (`DeriveMigrationName` names a migration after its file).
//!
//! Portable migrations: build columns with [`columns::Columns`], which passes each through
//! [`fit`], so MySQL/MariaDB gets its own spelling of the types it lacks; a partial index needs
//! its MySQL form (`backend::mysql::partial_unique_index`).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

mod columns;
mod m20261125_000001_agent_tables;
mod m20261125_000002_operator_tables;
mod m20261125_000003_oauth_tables;
mod m20261125_000004_live_messages;
mod m20261126_000005_blueprint_catalog;
mod m20261126_000006_one_default_app;
mod m20261127_000007_rehash_contracts;
mod m20261128_000008_server_secrets;
mod m20261128_000009_hash_coupon_codes;
mod m20261129_000010_rate_windows;
mod m20261130_000011_pair_codes;
mod m20261202_000001_registry_tables;
mod m20261203_000001_provider_keys;
mod m20261204_000001_app_hosted_settings;
mod m20261210_000001_accounts;
mod m20261210_000002_mail_delivery;
mod m20261213_000001_console_sessions;
mod m20261215_000001_org_invite_links;
mod m20261215_000002_app_org;
mod m20261215_000003_external_identities;
mod m20261216_000001_session_row_announcements;
mod m20261217_000001_registry_search_columns;
mod m20261217_000002_external_sign_ins_expiry_index;
mod m20261218_000001_oauth_codes_expiry_index;
mod m20261219_000001_registry_release_keys;
mod m20261220_000001_oauth_client_keys;
mod m20261221_000001_credit_reservations;
mod m20261221_000002_account_tokens_expiry_index;
mod m20261221_000003_retention_indexes;
mod m20261222_000001_session_expires_at;
mod m20261223_000001_write_guards;
mod m20261224_000001_oauth_clients_last_authorized;
mod m20261225_000001_oauth_client_id_indexes;
mod m20261226_000001_registry_descriptions;
mod m20261226_000002_registry_publisher_usage;
mod m20261227_000001_oauth_code_client_id_text;
mod m20261228_000001_registry_version_sizes;
mod m20261228_000002_console_sessions_by_principal;
mod one_table;
mod whole;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        let each: Vec<Box<dyn MigrationTrait>> = vec![
            Box::new(m20261125_000001_agent_tables::Migration),
            Box::new(m20261125_000002_operator_tables::Migration),
            Box::new(m20261125_000003_oauth_tables::Migration),
            Box::new(m20261125_000004_live_messages::Migration),
            Box::new(m20261126_000005_blueprint_catalog::Migration),
            Box::new(m20261126_000006_one_default_app::Migration),
            Box::new(m20261127_000007_rehash_contracts::Migration),
            Box::new(m20261128_000008_server_secrets::Migration),
            Box::new(m20261128_000009_hash_coupon_codes::Migration),
            Box::new(m20261129_000010_rate_windows::Migration),
            Box::new(m20261130_000011_pair_codes::Migration),
            Box::new(m20261202_000001_registry_tables::Migration),
            Box::new(m20261203_000001_provider_keys::Migration),
            Box::new(m20261204_000001_app_hosted_settings::Migration),
            Box::new(m20261210_000001_accounts::Migration),
            Box::new(m20261210_000002_mail_delivery::Migration),
            Box::new(m20261213_000001_console_sessions::Migration),
            Box::new(m20261215_000001_org_invite_links::Migration),
            Box::new(m20261215_000002_app_org::Migration),
            Box::new(m20261215_000003_external_identities::Migration),
            Box::new(m20261216_000001_session_row_announcements::Migration),
            Box::new(m20261217_000001_registry_search_columns::Migration),
            Box::new(m20261217_000002_external_sign_ins_expiry_index::Migration),
            Box::new(m20261218_000001_oauth_codes_expiry_index::Migration),
            Box::new(m20261219_000001_registry_release_keys::Migration),
            Box::new(m20261220_000001_oauth_client_keys::Migration),
            Box::new(m20261221_000001_credit_reservations::Migration),
            Box::new(m20261221_000002_account_tokens_expiry_index::Migration),
            Box::new(m20261221_000003_retention_indexes::Migration),
            Box::new(m20261222_000001_session_expires_at::Migration),
            Box::new(m20261223_000001_write_guards::Migration),
            Box::new(m20261224_000001_oauth_clients_last_authorized::Migration),
            Box::new(m20261225_000001_oauth_client_id_indexes::Migration),
            Box::new(m20261226_000001_registry_descriptions::Migration),
            Box::new(m20261226_000002_registry_publisher_usage::Migration),
            Box::new(m20261227_000001_oauth_code_client_id_text::Migration),
            Box::new(m20261228_000001_registry_version_sizes::Migration),
            Box::new(m20261228_000002_console_sessions_by_principal::Migration),
        ];
        each.into_iter()
            .map(|migration| Box::new(whole::Whole(migration)) as Box<dyn MigrationTrait>)
            .collect()
    }
}

/// `column` as `backend` spells it: unchanged on SQLite and PostgreSQL.
pub(crate) fn fit(mut column: ColumnDef, backend: DbBackend) -> ColumnDef {
    if backend == DbBackend::MySql {
        crate::backend::mysql::fit_column(&mut column);
    }
    column
}
