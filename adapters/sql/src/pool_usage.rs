//! `SqlxPoolUsage`: how many connections the sqlx pool behind sea-orm holds, for `/metrics`.

use sea_orm::DatabaseConnection;
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
        let (open, idle, max) = crate::backend::pool_readings(&self.db);
        PoolUsage {
            open,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
            max,
        }
    }
}
