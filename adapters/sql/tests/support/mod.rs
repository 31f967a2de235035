//! Runs a repository test on every backend: SQLite always, PostgreSQL when asked.
//!
//! Write the test as a plain `async fn name(db: DatabaseConnection)` and list it in
//! `support::backend_tests!`:
//!
//! ```ignore
//! mod support;
//! use sea_orm::DatabaseConnection;
//!
//! support::backend_tests!(creating_an_org_writes_three_rows, two_redemptions_credit_once);
//!
//! async fn creating_an_org_writes_three_rows(db: DatabaseConnection) { /* ... */ }
//! ```
//!
//! Each listed test becomes a module with two `#[tokio::test]`s, `<name>::sqlite` and
//! `<name>::postgres` (filter with `cargo test -p svc-sql postgres`). Both get a fresh,
//! migrated database of their own and run on a multi-threaded runtime, so concurrent tasks
//! really race:
//!
//! - `sqlite`: a new file `sqlite://<tmp>/svc-sql-test-<uuid>/x.db?mode=rwc`, removed afterwards;
//! - `postgres`: only when `SVC_TEST_DATABASE_URL` is set (for example
//!   `postgres://postgres@127.0.0.1:5432/test`). The helper connects there, creates
//!   `svc_test_<uuid>`, runs the test against it and drops it afterwards, best effort. Unset,
//!   the test prints `skipped: <name> (SVC_TEST_DATABASE_URL unset)` and passes; set but
//!   unreachable, it fails loudly.
//!
//! A test that panics still gets its database removed, and then fails with its own panic.

#![allow(dead_code)]

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, Statement};

/// The environment variable naming the PostgreSQL server used by the `postgres` variants.
pub const POSTGRES_URL_VAR: &str = "SVC_TEST_DATABASE_URL";

macro_rules! backend_tests {
    ($($test:ident),+ $(,)?) => {
        $(
            mod $test {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    $crate::support::run_on_sqlite(stringify!($test), super::$test).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    $crate::support::run_on_postgres(stringify!($test), super::$test).await;
                }
            }
        )+
    };
}
pub(crate) use backend_tests;

/// Runs `test` against a fresh SQLite file database.
pub async fn run_on_sqlite<F, Fut>(name: &str, test: F)
where
    F: FnOnce(DatabaseConnection) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let dir = TempDir::new(name);
    let url = format!("sqlite://{}/x.db?mode=rwc", dir.0.display());
    let db = svc_sql::connect_and_migrate(&url)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let outcome = tokio::spawn(test(db.clone())).await;
    let _ = db.close().await;
    drop(dir);
    if let Err(error) = outcome {
        std::panic::resume_unwind(error.into_panic());
    }
}

/// Runs `test` against a fresh PostgreSQL database, or skips when no server is configured.
pub async fn run_on_postgres<F, Fut>(name: &str, test: F)
where
    F: FnOnce(DatabaseConnection) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Ok(server_url) = std::env::var(POSTGRES_URL_VAR) else {
        println!("skipped: {name} ({POSTGRES_URL_VAR} unset)");
        return;
    };
    let admin = connect_admin(&server_url)
        .await
        .unwrap_or_else(|e| panic!("{name}: {POSTGRES_URL_VAR} is set but PostgreSQL is unreachable: {e}"));
    let database = format!("svc_test_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute_unprepared(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap_or_else(|e| panic!("{name}: cannot create database {database}: {e}"));

    let url = with_database(&server_url, &database);
    let outcome = match svc_sql::connect_and_migrate(&url).await {
        Ok(db) => {
            let outcome = tokio::spawn(test(db.clone())).await;
            let _ = db.close().await;
            outcome.map_err(|error| error.into_panic())
        }
        Err(error) => Err(Box::new(format!("{name}: {error}")) as Box<dyn std::any::Any + Send>),
    };
    // Best effort: a leftover database is only clutter.
    let _ = admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
        .await;
    let _ = admin.close().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn connect_admin(url: &str) -> Result<DatabaseConnection, sea_orm::DbErr> {
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_timeout(Duration::from_secs(5))
        .sqlx_logging(false);
    let db = Database::connect(options).await?;
    db.execute_unprepared("SELECT 1").await?;
    Ok(db)
}

/// `url` with its database name replaced, keeping credentials, host and query string.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// `SELECT COUNT(*)` of a table, to check that nothing (or exactly so much) was written.
pub async fn count_rows(db: &DatabaseConnection, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) AS n FROM {table}");
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap_or_else(|e| panic!("count {table}: {e}"))
        .expect("COUNT(*) returns a row");
    row.try_get::<i64>("", "n")
        .unwrap_or_else(|e| panic!("count {table}: {e}"))
}

/// A directory removed on drop, even when the test panicked.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("svc-sql-test-{name}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn with_database_replaces_only_the_database_name() {
    assert_eq!(
        with_database("postgres://u:p@h:5432/test", "x"),
        "postgres://u:p@h:5432/x"
    );
    assert_eq!(
        with_database("postgres://h/test?sslmode=disable", "x"),
        "postgres://h/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h:5432", "x"), "postgres://h:5432/x");
}

/// Rolls back the migration `name` and every later one, so a test can write the rows that
/// migration meets and then migrate up again.
pub async fn roll_back_through(db: &DatabaseConnection, name: &str) {
    use sea_orm_migration::MigratorTrait;
    let migrations = svc_sql::Migrator::migrations();
    let from_the_end = migrations
        .iter()
        .rev()
        .position(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no migration named {name}"));
    svc_sql::Migrator::down(db, Some(from_the_end as u32 + 1))
        .await
        .unwrap();
}
