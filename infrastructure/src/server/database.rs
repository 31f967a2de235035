//! The server's database beyond its repositories: the claim that says who else may use it, the
//! pool's bounds, and readiness that asks it.

use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection};
use svc_application::services::blueprints::BlueprintCatalog;
use svc_http::{NotReady, Readiness};
use svc_sql::ClaimMode;

use super::StartError;
use crate::connections::Draining;
use crate::settings::Settings;

/// How long a starting server waits for the previous server on its SQLite file to let go of it:
/// longer than a shutdown takes (the grace period, the live sockets' close, closing the database).
pub(super) const SOLE_SERVER_PATIENCE: Duration = Duration::from_secs(20);

/// Ready while not shutting down, the blueprint index is built and the database answers.
pub(super) struct ServerReadiness {
    pub(super) db: DatabaseConnection,
    pub(super) draining: Draining,
    pub(super) catalog: BlueprintCatalog,
}

#[async_trait::async_trait]
impl Readiness for ServerReadiness {
    async fn ready(&self) -> Result<(), NotReady> {
        if self.draining.is_set() {
            return Err(NotReady::ShuttingDown);
        }
        if !self.catalog.index_ready() {
            return Err(NotReady::BuildingIndex);
        }
        self.db
            .execute_unprepared("SELECT 1")
            .await
            .map(|_| ())
            .map_err(|e| NotReady::Database(e.to_string()))
    }
}

/// Claims a PostgreSQL database, alone when `server.database_sole_server` says this server is the
/// only one on it, shared otherwise (`svc_sql::DatabaseClaim`). SQLite has its file lock.
pub(super) async fn claim_database(
    settings: &Settings,
    db: &DatabaseConnection,
) -> Result<Option<svc_sql::DatabaseClaim>, StartError> {
    let sole = settings.server.database_sole_server;
    match db.get_database_backend() {
        sea_orm::DbBackend::Postgres => {
            let mode = if sole { ClaimMode::Sole } else { ClaimMode::Shared };
            Ok(svc_sql::DatabaseClaim::take(db, mode, SOLE_SERVER_PATIENCE).await?)
        }
        sea_orm::DbBackend::MySql if sole => Err(StartError::Config(
            "server.database_sole_server is for PostgreSQL (a SQLite server is always the only one); turn it off on MariaDB".into(),
        )),
        _ => Ok(None),
    }
}

/// Pool bounds from `server.database_*_connections` (0: the backend's default).
pub fn pool_size(settings: &Settings) -> svc_sql::PoolSize {
    let set = |n: u32| (n > 0).then_some(n);
    svc_sql::PoolSize {
        max_connections: set(settings.server.database_max_connections),
        min_connections: set(settings.server.database_min_connections),
    }
}
