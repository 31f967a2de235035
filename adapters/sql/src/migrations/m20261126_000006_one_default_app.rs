//! At most one default app per owner, enforced by the database: two first requests of a new
//! identity used to race and each create a default app, scoping their writes to different apps.
//! Existing duplicates keep their oldest default (the one readers already chose).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use crate::backend::mysql;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A partial unique index (SQLite and PostgreSQL both have them).
const INDEX: &str = "apps_one_default_per_owner";

/// MySQL's stand-in for the partial index: the owner of a default app, NULL otherwise.
const MYSQL_COLUMN: &str = "default_owner_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(
            "UPDATE apps SET is_default = false \
             WHERE is_default AND EXISTS ( \
               SELECT 1 FROM apps AS older \
               WHERE older.owner_id = apps.owner_id AND older.is_default \
                 AND (older.created_at < apps.created_at \
                      OR (older.created_at = apps.created_at AND older.app_id < apps.app_id)))",
        )
        .await?;
        let statements = match manager.get_database_backend() {
            DbBackend::MySql => mysql::partial_unique_index(
                INDEX,
                "apps",
                MYSQL_COLUMN,
                "CASE WHEN is_default THEN owner_id END",
                MYSQL_COLUMN,
            )
            .to_vec(),
            _ => vec![format!(
                "CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON apps (owner_id) WHERE is_default"
            )],
        };
        for statement in statements {
            db.execute_unprepared(&statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if manager.get_database_backend() == DbBackend::MySql {
            db.execute_unprepared(&format!("DROP INDEX {INDEX} ON apps")).await?;
            db.execute_unprepared(&format!("ALTER TABLE apps DROP COLUMN {MYSQL_COLUMN}"))
                .await?;
        } else {
            db.execute_unprepared(&format!("DROP INDEX IF EXISTS {INDEX}")).await?;
        }
        Ok(())
    }
}
