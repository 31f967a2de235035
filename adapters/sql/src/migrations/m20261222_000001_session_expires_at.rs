//! `sessions.expires_at`, indexed with `session_id`, so the retention sweep walks the sessions
//! whose expiry has passed instead of every old one (`agent/session_expiry.rs` says what it
//! holds). Existing rows keep the column's default (the epoch), as does a row an older server
//! writes beside a newer one: the sweep finds them first, keeps each that is alive by the expiry
//! rule, and stores on it the expiry a write stores, a page a statement (`agent/retention.rs`).
//!
//! This migration used to backfill every row in one UPDATE inside its transaction, which on
//! PostgreSQL holds a large `sessions` table locked while older replicas wait on it: the sweep's
//! repair replaces it. Installs that ran the backfill have their rows indexed already; on the
//! others the sweep indexes each live row once it reaches it.
//!
//! `ix_sessions_created_at` (`m20261221_000003_retention_indexes`) goes: the sweep was its only
//! reader. And `handshakes.created_at` is indexed: the sweep deletes handshakes by their age.
//! Each step is skipped when already done: MariaDB commits each statement of a migration by
//! itself, so a run that stopped between them is finished here.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (index, table, columns).
const INDEXES: [(&str, &str, &[&str]); 2] = [
    ("ix_sessions_expires_at", "sessions", &["expires_at", "session_id"]),
    ("ix_handshakes_created_at", "handshakes", &["created_at"]),
];

/// The epoch as every backend stores a zone-less instant (SQLite: as sqlx writes one, so text
/// compares).
const EPOCH: &str = "1970-01-01 00:00:00";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        if !manager.has_column("sessions", "expires_at").await? {
            // Without a zone (UTC): MySQL's TIMESTAMP ends in 2038, its DATETIME in 9999.
            let column = Columns::new(backend).fit(
                ColumnDef::new(Alias::new("expires_at"))
                    .date_time()
                    .not_null()
                    .default(Expr::val(EPOCH)),
            );
            manager
                .alter_table(
                    Table::alter()
                        .table(Alias::new("sessions"))
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for (name, table, columns) in INDEXES {
            if manager.has_index(table, name).await? {
                continue;
            }
            let mut index = Index::create().name(name).table(Alias::new(table)).to_owned();
            for column in columns {
                index.col(Alias::new(*column));
            }
            manager.create_index(index).await?;
        }
        if manager.has_index("sessions", "ix_sessions_created_at").await? {
            manager
                .drop_index(
                    Index::drop()
                        .name("ix_sessions_created_at")
                        .table(Alias::new("sessions"))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if !manager.has_index("sessions", "ix_sessions_created_at").await? {
            manager
                .create_index(
                    Index::create()
                        .name("ix_sessions_created_at")
                        .table(Alias::new("sessions"))
                        .col(Alias::new("created_at"))
                        .to_owned(),
                )
                .await?;
        }
        for (name, table, _) in INDEXES {
            if manager.has_index(table, name).await? {
                manager
                    .drop_index(Index::drop().name(name).table(Alias::new(table)).to_owned())
                    .await?;
            }
        }
        if manager.has_column("sessions", "expires_at").await? {
            manager
                .alter_table(
                    Table::alter()
                        .table(Alias::new("sessions"))
                        .drop_column(Alias::new("expires_at"))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
