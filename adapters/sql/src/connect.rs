use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection};
use sea_orm_migration::MigratorTrait;

use crate::Migrator;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot open database {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("cannot migrate database {url}: {reason}")]
    Migration { url: String, reason: String },
}

/// Opens the database named by `url` and applies every pending migration.
///
/// SQLite runs in WAL mode with `synchronous=FULL` on every connection so a committed row survives
/// a SIGKILL or power loss; an
/// in-memory SQLite gets one connection because each connection would otherwise see its own
/// empty database. An unreachable PostgreSQL surfaces from sqlx as a pool timeout, so the
/// acquire timeout is short and the error names the URL.
pub async fn connect_and_migrate(url: &str) -> Result<DatabaseConnection, ConnectError> {
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .acquire_timeout(Duration::from_secs(5))
        .connect_timeout(Duration::from_secs(5))
        .sqlx_logging(false);
    if url.starts_with("sqlite::memory:") || url.contains("mode=memory") {
        options.max_connections(1).min_connections(1);
    } else if url.starts_with("sqlite:") {
        options.max_connections(8);
    } else {
        options.max_connections(16);
    }
    // Per connection, not once: every pooled SQLite connection must write durably.
    options.map_sqlx_sqlite_opts(|o| {
        o.journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5))
    });
    create_private_sqlite_file(url).map_err(|e| ConnectError::Unreachable {
        url: redact(url),
        reason: e.to_string(),
    })?;
    let db = Database::connect(options)
        .await
        .map_err(|e| ConnectError::Unreachable {
            url: redact(url),
            reason: e.to_string(),
        })?;
    // Fail fast with a clear message instead of a later pool timeout.
    db.execute_unprepared("SELECT 1")
        .await
        .map_err(|e| ConnectError::Unreachable {
            url: redact(url),
            reason: e.to_string(),
        })?;
    Migrator::up(&db, None).await.map_err(|e| ConnectError::Migration {
        url: redact(url),
        reason: e.to_string(),
    })?;
    Ok(db)
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
