//! Hosted app settings on both backends: nothing until set, stored whole, replaced whole, apps
//! independent.

use crate::support;

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::app_settings::AppSettingsRepository;
use svc_domain::app_settings::{AppSettings, AuthMode};
use svc_sql::hosted::SeaOrmAppSettingsRepository;

support::backend_tests!(settings_are_stored_whole_and_replaced_whole);

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-04T10:00:00Z").unwrap().to_utc()
}

async fn settings_are_stored_whole_and_replaced_whole(db: DatabaseConnection) {
    let repo = SeaOrmAppSettingsRepository::new(db);
    assert_eq!(repo.get("app1").await.unwrap(), None);
    let full = AppSettings {
        rate_limit_per_minute: Some(42),
        enabled_adapters: Some(vec!["voice".into(), "camera".into()]),
        granted_capabilities: Some(vec![]),
        default_shell_type: Some("spatial".into()),
        auth_mode: Some(AuthMode::Both),
        federation_issuer: Some("https://issuer.example".into()),
        jwks_url: Some("https://issuer.example/jwks".into()),
        denied_subjects: vec!["u1".into(), "u2".into()],
        org_id: Some("01ORG".into()),
    };
    repo.put("app1", &full, now()).await.unwrap();
    assert_eq!(repo.get("app1").await.unwrap(), Some(full.clone()));
    assert_eq!(repo.get("app2").await.unwrap(), None, "apps are independent");

    let narrowed = AppSettings {
        rate_limit_per_minute: Some(5),
        ..AppSettings::default()
    };
    repo.put("app1", &narrowed, now()).await.unwrap();
    assert_eq!(repo.get("app1").await.unwrap(), Some(narrowed), "replaced whole");
}
