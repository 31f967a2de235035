//! `SqlxPoolUsage`: how many connections the sqlx pool behind sea-orm holds, for `/metrics`.

use sea_orm::DatabaseConnection;
use svc_application::ports::telemetry::{DatabasePoolUsage, PoolUsage};

use crate::read_lane::ReadLane;

pub struct SqlxPoolUsage {
    db: DatabaseConnection,
    lane: Option<ReadLane>,
}

impl SqlxPoolUsage {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db, lane: None }
    }

    /// Counts the connections `lane` holds between reads as idle: sqlx sees them handed out,
    /// but no statement runs on them, and they go back within a second once reads stop.
    pub fn with_read_lane(mut self, lane: Option<ReadLane>) -> Self {
        self.lane = lane;
        self
    }
}

impl DatabasePoolUsage for SqlxPoolUsage {
    fn usage(&self) -> PoolUsage {
        let (open, idle, max) = crate::backend::pool_readings(&self.db);
        let idle = idle + self.lane.as_ref().map_or(0, ReadLane::held);
        let reads = self.lane.as_ref().map(ReadLane::reads).unwrap_or_default();
        PoolUsage {
            open,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
            max,
            reads_alone: reads.alone,
            reads_shared: reads.shared,
        }
    }
}
