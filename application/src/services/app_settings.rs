//! Configuring an app's hosted settings (`svc apps configure`) and reading them.

use std::sync::Arc;

use svc_domain::app_settings::{AppSettings, AppSettingsChange, AppSettingsError};

use crate::ports::agent::AppRepository;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::operator::OrgRepository;
use crate::ports::{Clock, RepositoryError};

#[derive(Debug, thiserror::Error)]
pub enum ConfigureAppError {
    #[error("no app with id {0}")]
    UnknownApp(String),
    #[error("no org with id {0}")]
    UnknownOrg(String),
    #[error(transparent)]
    Invalid(#[from] AppSettingsError),
    #[error(transparent)]
    Storage(#[from] RepositoryError),
}

#[derive(Clone)]
pub struct AppSettingsService {
    apps: Arc<dyn AppRepository>,
    settings: Arc<dyn AppSettingsRepository>,
    /// Where `org_id` is checked to name an org; `None`: not checked.
    orgs: Option<Arc<dyn OrgRepository>>,
    clock: Arc<dyn Clock>,
}

impl AppSettingsService {
    pub fn new(apps: Arc<dyn AppRepository>, settings: Arc<dyn AppSettingsRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            apps,
            settings,
            orgs: None,
            clock,
        }
    }

    /// An app put in an org must name an org of `orgs`.
    pub fn checking_orgs(self, orgs: Arc<dyn OrgRepository>) -> Self {
        Self {
            orgs: Some(orgs),
            ..self
        }
    }

    /// Applies `change` to the app's settings and stores the result; the app must exist.
    pub async fn configure(&self, app_id: &str, change: AppSettingsChange) -> Result<AppSettings, ConfigureAppError> {
        if self.apps.get(app_id).await?.is_none() {
            return Err(ConfigureAppError::UnknownApp(app_id.to_owned()));
        }
        if let (Some(orgs), Some(Some(org_id))) = (&self.orgs, &change.org_id)
            && orgs.get(org_id).await?.is_none()
        {
            return Err(ConfigureAppError::UnknownOrg(org_id.clone()));
        }
        let current = self.settings.get(app_id).await?.unwrap_or_default();
        let next = current.apply(change)?;
        self.settings.put(app_id, &next, self.clock.now()).await?;
        Ok(next)
    }

    /// The app's settings; the defaults when none were set.
    pub async fn get(&self, app_id: &str) -> Result<AppSettings, RepositoryError> {
        Ok(self.settings.get(app_id).await?.unwrap_or_default())
    }
}
