//! A scratch database per test, on every backend: the one helper the repository tests and the
//! black-box suite use.
//!
//! - SQLite: a file `svc.db` in a directory the caller owns; always available.
//! - PostgreSQL: when `SVC_TEST_DATABASE_URL` names a server (for example
//!   `postgres://postgres@127.0.0.1:5432/test`), a database `svc_test_<uuid>` created there.
//! - MariaDB/MySQL: when `SVC_TEST_MARIADB_URL` names a server (for example
//!   `mysql://root@127.0.0.1:3306/test`), a database `svc_test_<uuid>` created there with the
//!   binary collation the migrations ask for.
//!
//! A server backend whose variable is unset prints `skipped: <test> (<VAR> unset)` and the test
//! passes, unless `SVC_REQUIRE_MARIADB=1` asks for MariaDB (then it fails); a variable that is set
//! but names an unreachable server fails the test. The database is dropped when the value is,
//! even after a panic, best effort.

use std::path::Path;
use std::time::Duration;

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection};

use crate::backend::mysql;

/// The environment variable naming the PostgreSQL server of the `postgres` variants.
pub const POSTGRES_URL_VAR: &str = "SVC_TEST_DATABASE_URL";
/// The environment variable naming the MariaDB server of the `mariadb` variants.
pub const MARIADB_URL_VAR: &str = "SVC_TEST_MARIADB_URL";
/// Set to `1` to fail, not skip, the `mariadb` variants when MariaDB is not configured.
pub const REQUIRE_MARIADB_VAR: &str = "SVC_REQUIRE_MARIADB";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mariadb,
}

/// A database of its own for one test; dropped (server backends) with this value.
pub struct ScratchDatabase {
    /// What `--database-url` or `connect` takes.
    pub url: String,
    pub backend: Backend,
    server: Option<(String, String)>,
}

impl ScratchDatabase {
    /// A fresh database for `test` on `backend` (SQLite: a file in `dir`); `None`, after printing
    /// `skipped: ...`, when the backend's server is not configured.
    pub async fn create(test: &str, backend: Backend, dir: &Path) -> Option<Self> {
        let var = match backend {
            Backend::Sqlite => {
                return Some(Self {
                    url: format!("sqlite://{}?mode=rwc", dir.join("svc.db").display()),
                    backend,
                    server: None,
                });
            }
            Backend::Postgres => POSTGRES_URL_VAR,
            Backend::Mariadb => MARIADB_URL_VAR,
        };
        let Ok(server_url) = std::env::var(var) else {
            if backend == Backend::Mariadb && std::env::var(REQUIRE_MARIADB_VAR).as_deref() == Ok("1") {
                panic!("{test}: {REQUIRE_MARIADB_VAR}=1 but {MARIADB_URL_VAR} is unset");
            }
            println!("skipped: {test} ({var} unset)");
            return None;
        };
        let name = format!("svc_test_{}", uuid::Uuid::new_v4().simple());
        let admin = connect_admin(&server_url)
            .await
            .unwrap_or_else(|e| panic!("{test}: {var}={server_url} is set but unreachable: {e}"));
        let create = match backend {
            Backend::Mariadb => format!(
                "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE {}",
                mysql::COLLATION
            ),
            _ => format!("CREATE DATABASE \"{name}\""),
        };
        admin
            .execute_unprepared(&create)
            .await
            .unwrap_or_else(|e| panic!("{test}: cannot create database {name}: {e}"));
        let _ = admin.close().await;
        Some(Self {
            url: with_database(&server_url, &name),
            backend,
            server: Some((server_url, name)),
        })
    }

    /// Connects and applies every migration.
    pub async fn connect_and_migrate(&self) -> Result<DatabaseConnection, crate::ConnectError> {
        crate::connect_and_migrate(&self.url).await
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let Some((server_url, name)) = self.server.take() else {
            return;
        };
        let drop = match self.backend {
            Backend::Mariadb => format!("DROP DATABASE IF EXISTS {name}"),
            _ => format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        };
        // Drop runs inside the test's runtime; a separate thread gets a runtime of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let admin = connect_admin(&server_url).await.ok()?;
                let dropped = admin.execute_unprepared(&drop).await.ok();
                let _ = admin.close().await;
                dropped
            })
        })
        .join();
    }
}

async fn connect_admin(url: &str) -> Result<DatabaseConnection, sea_orm::DbErr> {
    let mut options = ConnectOptions::new(mysql::driver_url(url).into_owned());
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
pub fn with_database(url: &str, database: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::with_database;

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
        assert_eq!(
            with_database("mysql://root@127.0.0.1:3306/test", "x"),
            "mysql://root@127.0.0.1:3306/x"
        );
    }
}
