use std::time::Duration;

use sea_orm::sqlx;
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr};
use sea_orm_migration::MigratorTrait;

use crate::Migrator;
use crate::backend::{mysql, postgres, sqlite};

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot open database {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("cannot migrate database {url}: {reason}")]
    Migration { url: String, reason: String },
    #[error(
        "{database} is in use by another `svc serve` (it holds {lock}); run one server per SQLite file, or PostgreSQL for replicas"
    )]
    InUse { database: String, lock: String },
    #[error("{}", claimed_reason(*sole))]
    Claimed { sole: bool },
}

fn claimed_reason(sole: bool) -> &'static str {
    if sole {
        "another `svc serve` uses this PostgreSQL database, and `server.database_sole_server` asks for one no other server uses: turn the setting off on every replica, or give this server a database of its own"
    } else {
        "this PostgreSQL database belongs to a `svc serve` started with `server.database_sole_server` (it keeps rows in memory that another server's writes would make stale): stop that server, or turn the setting off there to run replicas"
    }
}

/// Pool bounds; `None` keeps the backend's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolSize {
    pub max_connections: Option<u32>,
    pub min_connections: Option<u32>,
}

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

/// Opens the database named by `url`: `sqlite:`, `postgres://` or `mysql://` (also spelled
/// `mariadb://`).
///
/// An in-memory SQLite gets one connection because each connection would otherwise see its own
/// empty database. An unreachable server surfaces from sqlx as a pool timeout, so the acquire
/// timeout is short and the error names the URL.
pub async fn connect(url: &str, pool: PoolSize) -> Result<DatabaseConnection, ConnectError> {
    open(url, pool, false).await
}

/// [`connect`] for a server that claims its PostgreSQL database alone
/// (`server.database_sole_server`): its writes of session rows are not announced to replicas
/// (`session_watch.rs`), since none can run beside it, and an announcement makes PostgreSQL
/// commit the write one at a time with every other announcing write.
pub async fn connect_sole(url: &str, pool: PoolSize) -> Result<DatabaseConnection, ConnectError> {
    open(url, pool, true).await
}

async fn open(url: &str, pool: PoolSize, sole: bool) -> Result<DatabaseConnection, ConnectError> {
    let mut options = ConnectOptions::new(mysql::driver_url(url).into_owned());
    if sole {
        // A `SET` on each new connection rather than a startup option: poolers such as PgBouncer
        // refuse startup options they do not know.
        options.map_sqlx_postgres_pool_opts(|pool| {
            pool.after_connect(|connection, _| {
                Box::pin(async move {
                    sqlx::Executor::execute(connection, crate::session_watch::ANNOUNCEMENTS_OFF)
                        .await
                        .map(drop)
                })
            })
        });
    }
    options
        .acquire_timeout(Duration::from_secs(5))
        .connect_timeout(Duration::from_secs(5))
        .sqlx_logging(false);
    if sqlite::is_in_memory(url) {
        options.max_connections(1).min_connections(1);
    } else {
        let default_max = if sqlite::is_sqlite(url) { 8 } else { 16 };
        // Server backends hold the migration lock on one connection and migrate on another.
        options.max_connections(pool.max_connections.unwrap_or(default_max).max(2));
        if let Some(min) = pool.min_connections {
            options.min_connections(min);
        }
    }
    sqlite::configure(&mut options);
    check_before_handing_out(&mut options, url);
    let unreachable = |e: DbErr| ConnectError::Unreachable {
        url: redact(url),
        reason: e.to_string(),
    };
    sqlite::create_private_file(url).map_err(|e| ConnectError::Unreachable {
        url: redact(url),
        reason: e.to_string(),
    })?;
    let db = Database::connect(options).await.map_err(unreachable)?;
    // Fail fast with a clear message instead of a later pool timeout.
    db.execute_unprepared("SELECT 1").await.map_err(unreachable)?;
    Ok(db)
}

/// A pooled connection to a server that sat idle this long is pinged before it is used again.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(10);

/// The pool pings a connection before handing it out only where that can catch something. A
/// SQLite connection is a file handle no server or proxy can drop, and its ping is a round trip to
/// the connection's worker thread, paid by every statement that took a pooled connection. A
/// server's connection is pinged once it was idle for [`IDLE_BEFORE_PING`] (a server, proxy or
/// firewall drops idle ones), not on every acquire, which would add a network round trip to each
/// statement; a connection that died while in use fails its statement either way.
fn check_before_handing_out(options: &mut ConnectOptions, url: &str) {
    if sqlite::is_sqlite(url) {
        options.test_before_acquire(false);
    } else {
        options.test_before_acquire_if_idle_for(IDLE_BEFORE_PING);
    }
}

/// Applies every pending migration and answers how many there were. On PostgreSQL and MySQL a
/// lock is held meanwhile, so replicas started together migrate one after another instead of
/// racing on the same DDL.
pub async fn migrate(db: &DatabaseConnection, url: &str) -> Result<usize, ConnectError> {
    let failed = |reason: String| ConnectError::Migration {
        url: redact(url),
        reason,
    };
    let apply = || async {
        let pending = Migrator::get_pending_migrations(db).await?.len();
        Migrator::up(db, None).await.map(|()| pending)
    };
    match db.get_database_backend() {
        DbBackend::Postgres => postgres::with_migration_lock(db, apply).await.map_err(failed),
        DbBackend::MySql => {
            mysql::prepare_database(db).await.map_err(failed)?;
            mysql::with_migration_lock(db, apply).await.map_err(failed)
        }
        _ => apply().await.map_err(|e| failed(e.to_string())),
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
        assert_eq!(redact("mariadb://root:pw@h:3306/db"), "mariadb://root:***@h:3306/db");
    }

    /// `.cargo/config.toml` builds the bundled SQLite with the query planner stability guarantee;
    /// without it every `.one()` read is prepared again on each execution.
    #[tokio::test]
    async fn the_bundled_sqlite_plans_without_reading_bound_values() {
        use sea_orm::{ConnectionTrait, DbBackend, Statement};
        let db = super::connect("sqlite::memory:", super::PoolSize::default())
            .await
            .unwrap();
        let rows = db
            .query_all_raw(Statement::from_string(DbBackend::Sqlite, "PRAGMA compile_options"))
            .await
            .unwrap();
        let options: Vec<String> = rows.iter().map(|r| r.try_get_by_index(0).unwrap()).collect();
        assert!(options.iter().any(|o| o == "ENABLE_QPSG"), "{options:?}");
    }

    /// Every statement takes a pooled connection; on SQLite a ping there is a round trip to the
    /// connection's thread that can find nothing wrong.
    #[tokio::test]
    async fn a_sqlite_connection_is_handed_out_without_a_ping() {
        let db = super::connect("sqlite::memory:", super::PoolSize::default())
            .await
            .unwrap();
        assert!(!db.get_sqlite_connection_pool().options().get_test_before_acquire());
    }

    /// A transaction whose rollback failed leaves its SQLite connection counted as inside a
    /// transaction; the pool closes it instead of handing it out again, where the next `begin`
    /// would be a savepoint and its commit no commit at all.
    #[tokio::test]
    async fn a_sqlite_connection_left_inside_a_transaction_is_not_handed_out_again() {
        use sea_orm::ConnectionTrait;
        use sea_orm::sqlx::Connection;
        let dir = std::env::temp_dir().join(format!("svc-connect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}/left-open.db?mode=rwc", dir.display());
        let pool_size = super::PoolSize {
            max_connections: Some(2),
            min_connections: None,
        };
        let db = super::connect(&url, pool_size).await.unwrap();
        db.execute_unprepared("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY)")
            .await
            .unwrap();
        let txn = crate::errors::begin_write(&db).await.unwrap();
        txn.execute_unprepared("INSERT INTO t VALUES (1)").await.unwrap();
        // Ends SQLite's transaction behind sqlx's back, as SQLite does itself after some errors.
        txn.execute_unprepared("ROLLBACK").await.unwrap();
        assert!(txn.rollback().await.is_err(), "the rollback finds no transaction");
        let pool = db.get_sqlite_connection_pool();
        // Every connection the pool hands out now, held at once so that each is another one.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while pool.size() as usize != pool.num_idle() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let (first, second) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
        assert!(!first.is_in_transaction() && !second.is_in_transaction());
        drop((first, second));
        db.close().await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A PostgreSQL connection is pinged only once it sat idle: not on every acquire, where the
    /// ping is a network round trip per statement.
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_server_connection_is_not_pinged_on_every_acquire() {
        use crate::testing::{Backend, ScratchDatabase};
        let Some(scratch) =
            ScratchDatabase::create("connect_idle_ping", Backend::Postgres, &std::env::temp_dir()).await
        else {
            return;
        };
        let db = super::connect(&scratch.url, super::PoolSize::default()).await.unwrap();
        assert!(!db.get_postgres_connection_pool().options().get_test_before_acquire());
        sea_orm::ConnectionTrait::execute_unprepared(&db, "SELECT 1")
            .await
            .unwrap();
    }
}
