//! Each migration applies whole or not at all. sea-orm-migration runs a migration in a
//! transaction (with the row recording it) only on PostgreSQL unless the migration asks; on SQLite,
//! the default backend, a migration of several steps cut off midway (a crash, a full disk) left
//! the steps before the cut applied and the migration unrecorded, so the next start ran it again
//! over them and failed ("duplicate column name"): the server never started again without hand
//! repair. SQLite rolls DDL back, so there it now runs in one transaction too. MySQL commits each
//! DDL statement itself; there the transaction changes nothing and the migrations' own guards
//! are what they were.

use sea_orm_migration::prelude::*;

/// `0` in one transaction with the row that records it.
pub(super) struct Whole(pub(super) Box<dyn MigrationTrait>);

impl MigrationName for Whole {
    fn name(&self) -> &str {
        self.0.name()
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Whole {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        self.0.up(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        self.0.down(manager).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use sea_orm::{ConnectionTrait, Database, Statement};

    use super::*;

    /// Creates a table, then fails: a migration cut off after its first step.
    struct CutOff;

    impl MigrationName for CutOff {
        fn name(&self) -> &str {
            "m_cut_off"
        }
    }

    #[async_trait::async_trait]
    impl MigrationTrait for CutOff {
        async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
            let db = manager.get_connection();
            db.execute_unprepared("CREATE TABLE first_step (id INTEGER)").await?;
            Err(DbErr::Migration("cut off after its first step".into()))
        }
    }

    struct Cut;

    #[async_trait::async_trait]
    impl MigratorTrait for Cut {
        fn migrations() -> Vec<Box<dyn MigrationTrait>> {
            vec![Box::new(Whole(Box::new(CutOff)))]
        }
    }

    #[tokio::test]
    async fn a_migration_cut_off_midway_on_sqlite_leaves_nothing_applied() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        assert!(Cut::up(&db, None).await.is_err());
        let tables = db
            .query_all_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'first_step'",
            ))
            .await
            .unwrap();
        assert!(tables.is_empty(), "the first step was rolled back with the migration");
        assert!(
            Cut::get_pending_migrations(&db).await.unwrap().len() == 1,
            "and it is still pending"
        );
    }
}
