//! The event bus `live.bus` chooses (in-process, PostgreSQL LISTEN/NOTIFY or NATS) and its
//! background tasks.

use std::sync::Arc;

use crate::in_process_bus::InProcessEventBus;
use sea_orm::{DatabaseConnection, DbBackend};
use svc_application::ports::agent::EventBus;
use svc_application::ports::{Clock, Ids};
use svc_sql::{PgBusTasks, PgEventBus};

use crate::server::StartError;
use crate::settings::Settings;

/// The event bus's background tasks (a listener holds a pooled connection or a broker
/// connection): stopped before the pool closes.
pub enum BusTasks {
    Postgres(PgBusTasks),
    Nats(svc_events_nats::NatsBusTasks),
}

impl BusTasks {
    pub async fn stop(self) {
        match self {
            Self::Postgres(tasks) => tasks.stop().await,
            Self::Nats(tasks) => tasks.stop().await,
        }
    }
}

/// The event bus the settings ask for (see `live.bus` in config/default.toml); `ids` draws this
/// replica's origin id.
pub async fn event_bus(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
    ids: &dyn Ids,
) -> Result<(Arc<dyn EventBus>, Option<BusTasks>), StartError> {
    let local: Arc<dyn EventBus> = Arc::new(InProcessEventBus::default());
    let on_postgres = db.get_database_backend() == DbBackend::Postgres;
    let wanted = match settings.live.bus.as_str() {
        "in-process" => None,
        "postgres" if !on_postgres => {
            return Err(StartError::Config(
                "live.bus = \"postgres\" needs a PostgreSQL database".into(),
            ));
        }
        "postgres" => Some("postgres"),
        "nats" => Some("nats"),
        "auto" => on_postgres.then_some("postgres"),
        other => {
            return Err(StartError::Config(format!(
                "live.bus must be auto, in-process, postgres or nats, not `{other}`"
            )));
        }
    };
    let origin = ids.uuid();
    match wanted {
        None => Ok((local, None)),
        Some("nats") => {
            let (bus, tasks) =
                svc_events_nats::NatsEventBus::start(&settings.nats.url, &settings.nats.subject, local, origin)
                    .await
                    .map_err(|e| StartError::Config(format!("live.bus = \"nats\": {e}")))?;
            Ok((Arc::new(bus), Some(BusTasks::Nats(tasks))))
        }
        Some(_) => {
            let (bus, tasks) = PgEventBus::start(db, local, origin, clock)
                .await
                .map_err(|e| StartError::Config(format!("cannot LISTEN on PostgreSQL: {e}")))?;
            Ok((Arc::new(bus), Some(BusTasks::Postgres(tasks))))
        }
    }
}
