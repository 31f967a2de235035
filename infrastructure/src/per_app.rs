//! Wiring of the per-app plane: hosted app settings, federated identities on `/apps/<appId>/mcp`.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use svc_application::ports::Clock;
use svc_application::ports::agent::AppRepository;
use svc_application::ports::app_settings::AppSettingsRepository;
use svc_application::services::agent::AppRenderLimit;
use svc_application::services::app_settings::AppSettingsService;
use svc_application::services::federated_caller::Federation;
use svc_federation::{JwtFederatedVerifier, KeyFetchSettings};
use svc_sql::hosted::SeaOrmAppSettingsRepository;

use crate::settings::Settings;

pub fn app_settings(db: &DatabaseConnection) -> Arc<dyn AppSettingsRepository> {
    Arc::new(SeaOrmAppSettingsRepository::new(db.clone()))
}

/// The federated check: apps' issuers from the database, their keys over HTTP, cached.
pub fn federation(settings: &Settings, db: &DatabaseConnection) -> Federation {
    let fetch = &settings.federation;
    Federation {
        verifier: Arc::new(JwtFederatedVerifier::new(KeyFetchSettings {
            ttl: Duration::from_secs(fetch.jwks_ttl_seconds.max(1)),
            refresh_floor: Duration::from_secs(fetch.jwks_refresh_floor_seconds),
            timeout: Duration::from_secs(fetch.fetch_timeout_seconds.max(1)),
        })),
        settings: app_settings(db),
    }
}

pub fn app_settings_service(
    db: &DatabaseConnection,
    apps: Arc<dyn AppRepository>,
    clock: Arc<dyn Clock>,
) -> AppSettingsService {
    AppSettingsService::new(apps, app_settings(db), clock)
}

/// Each app's renders per minute, counted in the database's shared windows.
pub fn render_limit(db: &DatabaseConnection) -> AppRenderLimit {
    AppRenderLimit::new(app_settings(db), Arc::new(svc_sql::SqlSharedWindows::new(db.clone())))
}
