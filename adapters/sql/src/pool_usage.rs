//! `SqlxPoolUsage`: how many connections the sqlx pool behind sea-orm holds, for `/metrics`.

use sea_orm::{DatabaseBackend, DatabaseConnection};
use svc_application::ports::telemetry::{DatabasePoolUsage, PoolUsage};

pub struct SqlxPoolUsage {
    db: DatabaseConnection,
}

impl SqlxPoolUsage {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

impl DatabasePoolUsage for SqlxPoolUsage {
    fn usage(&self) -> PoolUsage {
        // The two pools are different types with the same three readings.
        let (open, idle, max) = match self.db.get_database_backend() {
            DatabaseBackend::Postgres => {
                let pool = self.db.get_postgres_connection_pool();
                (pool.size(), pool.num_idle(), pool.options().get_max_connections())
            }
            _ => {
                let pool = self.db.get_sqlite_connection_pool();
                (pool.size(), pool.num_idle(), pool.options().get_max_connections())
            }
        };
        PoolUsage {
            open,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
            max,
        }
    }
}
