//! `sessions.expires_at`, indexed with `session_id`, so the retention sweep walks the sessions
//! whose expiry has passed instead of every old one (`agent/session_expiry.rs` says what it
//! holds). Existing rows are backfilled by the same rule a write uses: the first multiple of ten
//! seconds after `last_activity_at + ttl_seconds`, at most 9999-12-31T23:59:00Z. A row still holding the
//! column's default (the epoch) is one written before it, by this migration's start or by an
//! older server running beside a newer one; the sweep checks each row it finds anyway.
//!
//! `ix_sessions_created_at` (`m20261221_000003_retention_indexes`) goes: the sweep was its only
//! reader. And `handshakes.created_at` is indexed: the sweep deletes handshakes by their age.
//! Each step is skipped when already done: MariaDB commits each statement of a migration by
//! itself, so a run that stopped between them is finished here.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// 9999-12-31T23:59:00Z (`agent::session_expiry::LAST_STORED_MINUTE`).
const LAST_STORED_MINUTE: i64 = 253_402_300_740;

/// (index, table, columns).
const INDEXES: [(&str, &str, &[&str]); 2] = [
    ("ix_sessions_expires_at", "sessions", &["expires_at", "session_id"]),
    ("ix_handshakes_created_at", "handshakes", &["created_at"]),
];

/// The epoch as every backend stores a zone-less instant (SQLite: as sqlx writes one, so text
/// compares).
const EPOCH: &str = "1970-01-01 00:00:00";

/// Sets every row still holding the epoch. `s` is `last_activity_at` in whole seconds since the
/// epoch (integer division rounds down, as every value is positive); a lifetime reaching past the
/// last stored minute is checked before adding (it may be near `i64::MAX`).
fn backfill(backend: DbBackend) -> String {
    let last = LAST_STORED_MINUTE;
    let (s, last_minute, instant_at, div) = match backend {
        DbBackend::Sqlite => (
            "CAST(strftime('%s', last_activity_at) AS INTEGER)".to_owned(),
            "'9999-12-31 23:59:00'".to_owned(),
            "strftime('%Y-%m-%d %H:%M:%S', {n}, 'unixepoch')",
            "/",
        ),
        DbBackend::Postgres => (
            "FLOOR(EXTRACT(EPOCH FROM last_activity_at))::BIGINT".to_owned(),
            format!("TO_TIMESTAMP({last}) AT TIME ZONE 'UTC'"),
            "TO_TIMESTAMP({n}) AT TIME ZONE 'UTC'",
            "/",
        ),
        _ => (
            "TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', last_activity_at)".to_owned(),
            "'9999-12-31 23:59:00'".to_owned(),
            "DATE_ADD('1970-01-01 00:00:00', INTERVAL {n} SECOND)",
            // MySQL's `/` gives a decimal.
            "DIV",
        ),
    };
    let next = format!("(({s} + ttl_seconds) {div} 10) * 10 + 10");
    let stored = instant_at.replace("{n}", &next);
    format!(
        "UPDATE sessions SET expires_at = CASE WHEN ttl_seconds >= {last} - {s} THEN {last_minute} ELSE {stored} END \
         WHERE expires_at = '{EPOCH}'"
    )
}

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
        manager.get_connection().execute_unprepared(&backfill(backend)).await?;
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
