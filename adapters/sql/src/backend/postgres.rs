//! PostgreSQL: the scale-out backend (replicas share it; live frames cross them by NOTIFY).

use sea_orm::sqlx;
use sea_orm::{DatabaseConnection, DbErr};

/// Any fixed number that every replica agrees on: the advisory lock held while migrating.
const MIGRATION_LOCK_KEY: i64 = 0x7376_635f_6d69_6772; // "svc_migr"

/// Runs `apply` holding a session advisory lock, so replicas started together migrate one after
/// another instead of racing on the same DDL. The lock lives on a connection of its own.
pub async fn with_migration_lock<F, Fut>(db: &DatabaseConnection, apply: F) -> Result<usize, String>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<usize, DbErr>>,
{
    let mut lock = db
        .get_postgres_connection_pool()
        .acquire()
        .await
        .map_err(|e| e.to_string())?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK_KEY)
        .execute(&mut *lock)
        .await
        .map_err(|e| format!("cannot take the migration lock: {e}"))?;
    let migrated = apply().await.map_err(|e| e.to_string());
    let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATION_LOCK_KEY)
        .execute(&mut *lock)
        .await;
    if let Err(e) = unlocked {
        // The lock goes with the connection; closing it releases the lock for the others.
        tracing::warn!(error = %e, "releasing the migration lock failed; closing its connection");
        let _ = lock.detach();
    }
    migrated
}

pub fn pool_readings(db: &DatabaseConnection) -> (u32, usize, u32) {
    let pool = db.get_postgres_connection_pool();
    (pool.size(), pool.num_idle(), pool.options().get_max_connections())
}
