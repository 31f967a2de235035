//! SQLite: the embedded default, one file under the data directory.

use std::time::Duration;

use sea_orm::sqlx::Connection;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, DatabaseConnection};

/// Prepared statements kept per connection (sqlx's default is 100): the server's own statements
/// and the group commit's statement lists, up to 7 texts per kind of coalescable write
/// (`group_commit::together`, which says what they cost), fit without evicting one another. A
/// statement takes memory only once a connection has run it.
const STATEMENT_CACHE_CAPACITY: usize = 256;

pub fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:")
}

pub fn is_in_memory(url: &str) -> bool {
    url.starts_with("sqlite::memory:") || url.contains("mode=memory")
}

/// WAL mode with `synchronous=FULL` on every connection, so a committed row survives a SIGKILL
/// or power loss; writers queue on the busy timeout (write transactions begin `IMMEDIATE`, see
/// `errors::begin_write`). Per connection, not once: every pooled connection must write durably.
///
/// A connection that comes back to the pool still inside a transaction is closed, not reused:
/// when a rollback failed (SQLite had already ended the transaction after an I/O error, say),
/// sqlx still counts the transaction open, and on such a connection sea-orm's next `begin` is a
/// savepoint and its `COMMIT` a `RELEASE`, which would acknowledge writes never made durable.
pub fn configure(options: &mut ConnectOptions) {
    options.map_sqlx_sqlite_opts(|o| {
        o.journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5))
            .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
    });
    options.map_sqlx_sqlite_pool_opts(|pool| {
        pool.after_release(|connection, _| {
            Box::pin(async move {
                if !connection.is_in_transaction() {
                    return Ok(true);
                }
                // A transaction dropped unfinished queued its rollback on the connection's
                // worker: the ping returns after it ran.
                connection.ping().await?;
                Ok(!connection.is_in_transaction())
            })
        })
    });
}

/// Creates the file of a SQLite URL as 0600 before SQLite does (it would follow the umask,
/// usually 0644). SQLite gives its `-wal` and `-shm` files the database file's mode, so they are
/// private too. An existing file, an in-memory database and other backends are left alone.
pub fn create_private_file(url: &str) -> std::io::Result<()> {
    let Some(path) = file_path(url) else {
        return Ok(());
    };
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

/// The file of a SQLite URL; `None` for an in-memory database or another backend.
pub fn file_path(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("sqlite:")?;
    let path = rest.trim_start_matches("//");
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    (!path.is_empty() && !path.starts_with(":memory:") && !is_in_memory(url)).then_some(path)
}

pub fn pool_readings(db: &DatabaseConnection) -> (u32, usize, u32) {
    let pool = db.get_sqlite_connection_pool();
    (pool.size(), pool.num_idle(), pool.options().get_max_connections())
}
