//! The default resource validator: universal resources always exist; a per-app resource exists
//! when its app does.

use std::sync::Arc;

use svc_domain::oauth::{Issuer, ResourceIndicator};

use crate::ports::RepositoryError;
use crate::ports::agent::AppRepository;
use crate::ports::oauth::ResourceValidator;

pub struct KnownAppsResourceValidator {
    apps: Arc<dyn AppRepository>,
}

impl KnownAppsResourceValidator {
    pub fn new(apps: Arc<dyn AppRepository>) -> Self {
        Self { apps }
    }
}

#[async_trait::async_trait]
impl ResourceValidator for KnownAppsResourceValidator {
    async fn accepts(&self, _issuer: &Issuer, resource: &ResourceIndicator) -> Result<bool, RepositoryError> {
        match resource {
            ResourceIndicator::Universal => Ok(true),
            ResourceIndicator::App(app_id) => Ok(self.apps.get(app_id).await?.is_some()),
        }
    }
}
