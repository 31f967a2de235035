//! Indexes of the retention sweep (`agent/retention.rs`): `sessions.created_at`, so the walk
//! over sessions that may be past their grace reads only old sessions (not `last_activity_at`,
//! which every heartbeat moves: an index on it would make each heartbeat rewrite it); and the
//! stamps of gestures (`action_events.fired_at`) and deliveries (`stream_envelopes.timestamp`),
//! so a sweep finds the sessions written since the last one without reading every stored row.
//! Each is created only when missing: MariaDB commits each statement of a migration by itself,
//! so a run that stopped between them is finished here.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (index, table, column).
const INDEXES: [(&str, &str, &str); 3] = [
    ("ix_sessions_created_at", "sessions", "created_at"),
    ("ix_action_events_fired_at", "action_events", "fired_at"),
    ("ix_stream_envelopes_timestamp", "stream_envelopes", "timestamp"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table, column) in INDEXES {
            if manager.has_index(table, name).await? {
                continue;
            }
            manager
                .create_index(
                    Index::create()
                        .name(name)
                        .table(Alias::new(table))
                        .col(Alias::new(column))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table, _) in INDEXES {
            if !manager.has_index(table, name).await? {
                continue;
            }
            manager
                .drop_index(Index::drop().name(name).table(Alias::new(table)).to_owned())
                .await?;
        }
        Ok(())
    }
}
