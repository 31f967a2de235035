//! MySQL and MariaDB (`mysql://` or `mariadb://`): a third backend proving the swap. Replicas
//! that need live frames across them still need PostgreSQL (this backend runs the in-process
//! event bus).

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{ColumnDef, ColumnType, Expr};
use sea_orm::sqlx::{self, Row};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, RuntimeErr,
};
use svc_application::ports::agent::DrainBound;

use crate::agent::entities::action_event;
use crate::agent::events::{gesture_bytes, last_that_fits, undrained};
use crate::errors::begin_write;

/// The named lock every replica takes while migrating (`GET_LOCK` is per server, so the
/// database name is part of it).
const MIGRATION_LOCK_PREFIX: &str = "svc_migrations:";

/// How long a replica waits for another one's migrations, in seconds.
const MIGRATION_LOCK_WAIT_SECONDS: i64 = 600;

/// Identifiers compare byte for byte (ids, hashes, tokens are case-sensitive); MySQL's default
/// collations ignore case.
pub const COLLATION: &str = "utf8mb4_bin";

/// The URL the driver understands: `mariadb://` is accepted as a spelling of `mysql://`.
pub fn driver_url(url: &str) -> Cow<'_, str> {
    match url.strip_prefix("mariadb:") {
        Some(rest) => Cow::Owned(format!("mysql:{rest}")),
        None => Cow::Borrowed(url),
    }
}

/// Tables take the database's default collation: make it binary before the first table exists,
/// unless the operator created the database that way already (then no ALTER privilege is needed).
pub async fn prepare_database(db: &DatabaseConnection) -> Result<(), String> {
    let pool = db.get_mysql_connection_pool();
    let current: String = sqlx::query("SELECT @@collation_database")
        .fetch_one(pool)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| e.to_string())?;
    if current != COLLATION {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER DATABASE CHARACTER SET utf8mb4 COLLATE {COLLATION}")))
            .execute(pool)
            .await
            .map_err(|e| format!("cannot set the database's collation to {COLLATION} (create it with CHARACTER SET utf8mb4 COLLATE {COLLATION}): {e}"))?;
    }
    Ok(())
}

/// Runs `apply` holding `GET_LOCK`, so replicas started together migrate one after another, as
/// PostgreSQL's advisory lock does. The lock lives on a connection of its own.
pub async fn with_migration_lock<F, Fut>(db: &DatabaseConnection, apply: F) -> Result<usize, String>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<usize, DbErr>>,
{
    let mut lock = db
        .get_mysql_connection_pool()
        .acquire()
        .await
        .map_err(|e| e.to_string())?;
    let name: String = sqlx::query("SELECT CONCAT(?, DATABASE())")
        .bind(MIGRATION_LOCK_PREFIX)
        .fetch_one(&mut *lock)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| e.to_string())?;
    let taken: Option<i64> = sqlx::query("SELECT GET_LOCK(?, ?)")
        .bind(&name)
        .bind(MIGRATION_LOCK_WAIT_SECONDS)
        .fetch_one(&mut *lock)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| format!("cannot take the migration lock: {e}"))?;
    if taken != Some(1) {
        return Err(format!(
            "cannot take the migration lock: another replica held it for {MIGRATION_LOCK_WAIT_SECONDS} s"
        ));
    }
    let migrated = apply().await.map_err(|e| e.to_string());
    let released = sqlx::query("SELECT RELEASE_LOCK(?)")
        .bind(&name)
        .execute(&mut *lock)
        .await;
    if let Err(e) = released {
        // The lock goes with the connection; closing it releases the lock for the others.
        tracing::warn!(error = %e, "releasing the migration lock failed; closing its connection");
        let _ = lock.detach();
    }
    migrated
}

pub fn pool_readings(db: &DatabaseConnection) -> (u32, usize, u32) {
    let pool = db.get_mysql_connection_pool();
    (pool.size(), pool.num_idle(), pool.options().get_max_connections())
}

/// InnoDB chose this transaction as a deadlock victim (1213) or it waited too long for a row
/// lock (1205): running it again is safe.
pub fn is_deadlock(error: &DbErr) -> bool {
    let (DbErr::Exec(RuntimeErr::SqlxError(e)) | DbErr::Query(RuntimeErr::SqlxError(e))) = error else {
        return false;
    };
    match &**e {
        sqlx::Error::Database(db) => db
            .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
            .is_some_and(|e| matches!(e.number(), 1205 | 1213)),
        _ => false,
    }
}

/// The portable column types MySQL spells otherwise: `timestamptz` becomes `datetime(6)`
/// (MySQL's `timestamp` keeps whole seconds and ends in 2038), `text` becomes `longtext` (its
/// `text` holds 64 KiB), bytes become `longblob` (its `binary` is fixed-length).
pub fn fit_column(column: &mut ColumnDef) {
    let fitted = match column.get_column_type() {
        Some(ColumnType::TimestampWithTimeZone) => "datetime(6)",
        Some(ColumnType::Text) => "longtext",
        Some(ColumnType::Binary(_) | ColumnType::Blob) => "longblob",
        _ => return,
    };
    column.custom(sea_orm::sea_query::Alias::new(fitted));
}

/// MySQL has no partial index: a unique index over a stored generated column that is NULL
/// outside the rows the index is about (NULLs never collide) does the same. Returns the
/// statements adding `column` as `expression` and the unique index over `columns`.
pub fn partial_unique_index(index: &str, table: &str, column: &str, expression: &str, columns: &str) -> [String; 2] {
    [
        format!("ALTER TABLE {table} ADD COLUMN {column} VARCHAR(255) AS ({expression}) STORED"),
        format!("CREATE UNIQUE INDEX {index} ON {table} ({columns})"),
    ]
}

/// MySQL has no `UPDATE ... RETURNING`: the sizes of the undrained gestures are read `FOR
/// UPDATE`, and those that fit in `bound` (the oldest always) read and marked in the same
/// transaction, so a concurrent drain waits and then finds them drained.
pub async fn drain_actions(
    db: &DatabaseConnection,
    session_id: &str,
    now: DateTime<Utc>,
    bound: DrainBound,
) -> Result<Vec<action_event::Model>, DbErr> {
    let txn = begin_write(db).await?;
    let sizes: Vec<(i64, i64)> = undrained(session_id)
        .select_only()
        .column(action_event::Column::Sequence)
        .column_as(gesture_bytes(DbBackend::MySql), "bytes")
        .order_by_asc(action_event::Column::Sequence)
        .limit(bound.gestures)
        .lock_exclusive()
        .into_tuple()
        .all(&txn)
        .await?;
    let Some(last) = last_that_fits(sizes, bound.bytes) else {
        txn.commit().await?;
        return Ok(Vec::new());
    };
    let mut taken = undrained(session_id)
        .filter(action_event::Column::Sequence.lte(last))
        .all(&txn)
        .await?;
    action_event::Entity::update_many()
        .col_expr(action_event::Column::DrainedAt, Expr::value(now))
        .filter(action_event::Column::SessionId.eq(session_id))
        .filter(action_event::Column::DrainedAt.is_null())
        .filter(action_event::Column::Sequence.lte(last))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    for model in &mut taken {
        model.drained_at = Some(now);
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::driver_url;

    #[test]
    fn mariadb_is_a_spelling_of_mysql() {
        assert_eq!(
            driver_url("mariadb://root@127.0.0.1:3306/test"),
            "mysql://root@127.0.0.1:3306/test"
        );
        assert_eq!(driver_url("mysql://u:p@h/db"), "mysql://u:p@h/db");
        assert_eq!(driver_url("sqlite://x.db"), "sqlite://x.db");
    }
}
