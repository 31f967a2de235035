//! `oauth_clients.last_authorized_at`: when the client last completed an authorization, so the
//! code sweep deletes a registered client only once it has been unused for a while
//! (`application/src/services/oauth/sweep.rs`). A client registered before this migration gets
//! the migration's time: whether it ever connected was not recorded, so it is kept as long as one
//! that connected just now.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "oauth_clients";
const COLUMN: &str = "last_authorized_at";

/// The current instant as each backend stores a `DateTimeUtc` (SQLite: text that compares with
/// what sqlx writes).
fn now(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Sqlite => "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        DbBackend::Postgres => "CURRENT_TIMESTAMP",
        _ => "UTC_TIMESTAMP(6)",
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.has_column(TABLE, COLUMN).await? {
            return Ok(());
        }
        let backend = manager.get_database_backend();
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new(TABLE))
                    .add_column(Columns::new(backend).optional_time(Alias::new(COLUMN)))
                    .to_owned(),
            )
            .await?;
        let backfill = format!("UPDATE {TABLE} SET {COLUMN} = {}", now(backend));
        manager.get_connection().execute_unprepared(&backfill).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if !manager.has_column(TABLE, COLUMN).await? {
            return Ok(());
        }
        manager
            .alter_table(
                Table::alter()
                    .table(Alias::new(TABLE))
                    .drop_column(Alias::new(COLUMN))
                    .to_owned(),
            )
            .await
    }
}
