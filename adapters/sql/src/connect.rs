use std::time::Duration;

use sea_orm::sqlx;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr};
use sea_orm_migration::MigratorTrait;

use crate::Migrator;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot open database {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("cannot migrate database {url}: {reason}")]
    Migration { url: String, reason: String },
}

/// Pool bounds; `None` keeps the backend's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolSize {
    pub max_connections: Option<u32>,
    pub min_connections: Option<u32>,
}

/// Any fixed number that every replica agrees on: the advisory lock held while migrating.
const MIGRATION_LOCK_KEY: i64 = 0x7376_635f_6d69_6772; // "svc_migr"

/// Opens the database named by `url` and applies every pending migration.
pub async fn connect_and_migrate(url: &str) -> Result<DatabaseConnection, ConnectError> {
    connect_and_migrate_with(url, PoolSize::default()).await
}

/// [`connect`] then [`migrate`].
pub async fn connect_and_migrate_with(url: &str, pool: PoolSize) -> Result<DatabaseConnection, ConnectError> {
    let db = connect(url, pool).await?;
    let applied = migrate(&db, url).await?;
    if applied > 0 {
        tracing::info!(applied, "database migrated");
    }
    Ok(db)
}

/// Opens the database named by `url`.
///
/// SQLite runs in WAL mode with `synchronous=FULL` on every connection so a committed row survives
/// a SIGKILL or power loss; an in-memory SQLite gets one connection because each connection would
/// otherwise see its own empty database. An unreachable PostgreSQL surfaces from sqlx as a pool
/// timeout, so the acquire timeout is short and the error names the URL.
pub async fn connect(url: &str, pool: PoolSize) -> Result<DatabaseConnection, ConnectError> {
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .acquire_timeout(Duration::from_secs(5))
        .connect_timeout(Duration::from_secs(5))
        .sqlx_logging(false);
    if url.starts_with("sqlite::memory:") || url.contains("mode=memory") {
        options.max_connections(1).min_connections(1);
    } else {
        let default_max = if url.starts_with("sqlite:") { 8 } else { 16 };
        // PostgreSQL migrations hold the lock on one connection and migrate on another.
        options.max_connections(pool.max_connections.unwrap_or(default_max).max(2));
        if let Some(min) = pool.min_connections {
            options.min_connections(min);
        }
    }
    // Per connection, not once: every pooled SQLite connection must write durably.
    options.map_sqlx_sqlite_opts(|o| {
        o.journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5))
    });
    let unreachable = |e: DbErr| ConnectError::Unreachable {
        url: redact(url),
        reason: e.to_string(),
    };
    create_private_sqlite_file(url).map_err(|e| ConnectError::Unreachable {
        url: redact(url),
        reason: e.to_string(),
    })?;
    let db = Database::connect(options).await.map_err(unreachable)?;
    // Fail fast with a clear message instead of a later pool timeout.
    db.execute_unprepared("SELECT 1").await.map_err(unreachable)?;
    Ok(db)
}

/// Applies every pending migration and answers how many there were. On PostgreSQL a session
/// advisory lock is held meanwhile, so replicas started together migrate one after another
/// instead of racing on the same DDL.
pub async fn migrate(db: &DatabaseConnection, url: &str) -> Result<usize, ConnectError> {
    let failed = |reason: String| ConnectError::Migration {
        url: redact(url),
        reason,
    };
    let apply = || async {
        let pending = Migrator::get_pending_migrations(db).await?.len();
        Migrator::up(db, None).await.map(|()| pending)
    };
    if db.get_database_backend() != DbBackend::Postgres {
        return apply().await.map_err(|e| failed(e.to_string()));
    }
    let mut lock = db
        .get_postgres_connection_pool()
        .acquire()
        .await
        .map_err(|e| failed(e.to_string()))?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK_KEY)
        .execute(&mut *lock)
        .await
        .map_err(|e| failed(format!("cannot take the migration lock: {e}")))?;
    let migrated = apply().await.map_err(|e| failed(e.to_string()));
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

/// Creates the file of a SQLite URL as 0600 before SQLite does (it would follow the umask,
/// usually 0644). SQLite gives its `-wal` and `-shm` files the database file's mode, so they are
/// private too. An existing file, an in-memory database and PostgreSQL are left alone.
fn create_private_sqlite_file(url: &str) -> std::io::Result<()> {
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Ok(());
    };
    let path = rest.trim_start_matches("//");
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    if path.is_empty() || path.starts_with(":memory:") || url.contains("mode=memory") {
        return Ok(());
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // A missing directory: SQLite reports it in its own words.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other.map(drop),
    }
}

/// Hides a password in a database URL before it reaches a log or an error message.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.find(':') {
                Some(colon) => format!("{}{}:***{}", &url[..scheme_end + 3], &credentials[..colon], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn redact_hides_only_the_password() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("sqlite://./x.db?mode=rwc"), "sqlite://./x.db?mode=rwc");
    }
}
