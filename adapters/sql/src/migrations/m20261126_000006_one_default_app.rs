//! At most one default app per owner, enforced by the database: two first requests of a new
//! identity used to race and each create a default app, scoping their writes to different apps.
//! Existing duplicates keep their oldest default (the one readers already chose).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A partial unique index (SQLite and PostgreSQL both have them).
const INDEX: &str = "apps_one_default_per_owner";

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
        db.execute_unprepared(&format!(
            "CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON apps (owner_id) WHERE is_default"
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!("DROP INDEX IF EXISTS {INDEX}"))
            .await?;
        Ok(())
    }
}
