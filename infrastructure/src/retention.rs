//! The retention sweep over the server's database (`[retention]`): sessions past their grace
//! deleted with everything stored under them, what a replay no longer serves trimmed, and
//! handshakes and org invite links past their grace deleted
//! (`svc_application::services::retention`).

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use svc_application::ports::Clock;
use svc_application::services::retention::{RetentionPolicy, RetentionService};
use svc_sql::agent::SeaOrmRetentionRepository;

use crate::settings::Settings;

/// The sweep and how often each replica runs it.
#[derive(Clone)]
pub struct SessionRetention {
    pub service: RetentionService,
    pub interval: Duration,
}

impl SessionRetention {
    /// Over `db`, writing through the group-commit `writer` (SQLite) and making the sessions'
    /// read cache `reads` forget the sessions it deletes.
    pub fn over(
        settings: &Settings,
        db: &DatabaseConnection,
        writer: Option<svc_sql::Writer>,
        reads: Option<svc_sql::ReadCache>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let retention = &settings.retention;
        let store = SeaOrmRetentionRepository::new(db.clone())
            .with_writer(writer)
            .with_read_cache(reads);
        let days = i64::try_from(retention.expired_session_days).unwrap_or(i64::MAX);
        let policy = RetentionPolicy {
            expired_grace: chrono::Duration::try_days(days).unwrap_or(chrono::Duration::MAX),
            // What the live channel replays is what is kept: the same setting.
            replay_buffer: settings.live.replay_buffer,
            batch_rows: retention.batch_rows,
        };
        Self {
            service: RetentionService::new(Arc::new(store), clock, policy),
            interval: Duration::from_secs(retention.sweep_interval_seconds),
        }
    }
}
