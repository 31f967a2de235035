//! `SeaOrmAppSettingsRepository`: one row of `app_hosted_settings` per configured app.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{DatabaseConnection, EntityTrait, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::app_settings::AppSettingsRepository;
use svc_domain::app_settings::{AppSettings, AuthMode};

use crate::errors::corrupt;

mod row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "app_hosted_settings")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub app_id: String,
        pub rate_limit_per_minute: Option<i32>,
        pub enabled_adapters: Option<String>,
        pub granted_capabilities: Option<String>,
        pub default_shell_type: Option<String>,
        pub auth_mode: Option<String>,
        pub federation_issuer: Option<String>,
        pub jwks_url: Option<String>,
        pub denied_subjects: String,
        pub updated_at: DateTimeUtc,
        pub org_id: Option<String>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub struct SeaOrmAppSettingsRepository {
    db: DatabaseConnection,
}

impl SeaOrmAppSettingsRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

fn unavailable(error: impl Into<anyhow::Error>) -> RepositoryError {
    RepositoryError::Unavailable(error.into())
}

fn list_text(list: &[String]) -> String {
    serde_json::Value::from(list.to_vec()).to_string()
}

fn list(column: &'static str, text: &str) -> Result<Vec<String>, RepositoryError> {
    serde_json::from_str(text).map_err(|e| corrupt(column, e))
}

fn settings(m: row::Model) -> Result<AppSettings, RepositoryError> {
    Ok(AppSettings {
        rate_limit_per_minute: m
            .rate_limit_per_minute
            .map(|rate| u32::try_from(rate).map_err(|e| corrupt("app_hosted_settings.rate_limit_per_minute", e)))
            .transpose()?,
        enabled_adapters: m
            .enabled_adapters
            .as_deref()
            .map(|text| list("app_hosted_settings.enabled_adapters", text))
            .transpose()?,
        granted_capabilities: m
            .granted_capabilities
            .as_deref()
            .map(|text| list("app_hosted_settings.granted_capabilities", text))
            .transpose()?,
        default_shell_type: m.default_shell_type,
        auth_mode: m
            .auth_mode
            .as_deref()
            .map(|mode| AuthMode::parse(mode).map_err(|e| corrupt("app_hosted_settings.auth_mode", e)))
            .transpose()?,
        federation_issuer: m.federation_issuer,
        jwks_url: m.jwks_url,
        denied_subjects: list("app_hosted_settings.denied_subjects", &m.denied_subjects)?,
        org_id: m.org_id,
    })
}

#[async_trait::async_trait]
impl AppSettingsRepository for SeaOrmAppSettingsRepository {
    async fn get(&self, app_id: &str) -> Result<Option<AppSettings>, RepositoryError> {
        row::Entity::find_by_id(app_id.to_owned())
            .one(&self.db)
            .await
            .map_err(unavailable)?
            .map(settings)
            .transpose()
    }

    async fn put(&self, app_id: &str, s: &AppSettings, now: DateTime<Utc>) -> Result<(), RepositoryError> {
        let rate = s
            .rate_limit_per_minute
            .map(|rate| i32::try_from(rate).map_err(unavailable))
            .transpose()?;
        let model = row::ActiveModel {
            app_id: Set(app_id.to_owned()),
            rate_limit_per_minute: Set(rate),
            enabled_adapters: Set(s.enabled_adapters.as_deref().map(list_text)),
            granted_capabilities: Set(s.granted_capabilities.as_deref().map(list_text)),
            default_shell_type: Set(s.default_shell_type.clone()),
            auth_mode: Set(s.auth_mode.map(|m| m.as_str().to_owned())),
            federation_issuer: Set(s.federation_issuer.clone()),
            jwks_url: Set(s.jwks_url.clone()),
            denied_subjects: Set(list_text(&s.denied_subjects)),
            updated_at: Set(now),
            org_id: Set(s.org_id.clone()),
        };
        row::Entity::insert(model)
            .on_conflict(
                OnConflict::column(row::Column::AppId)
                    .update_columns([
                        row::Column::RateLimitPerMinute,
                        row::Column::EnabledAdapters,
                        row::Column::GrantedCapabilities,
                        row::Column::DefaultShellType,
                        row::Column::AuthMode,
                        row::Column::FederationIssuer,
                        row::Column::JwksUrl,
                        row::Column::DeniedSubjects,
                        row::Column::UpdatedAt,
                        row::Column::OrgId,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}
