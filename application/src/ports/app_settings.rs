//! Where the hosted settings of apps are kept (`svc apps configure` writes, the endpoint check,
//! the render limit and `svc_discover` read).

use svc_domain::app_settings::AppSettings;

use super::RepositoryError;

#[async_trait::async_trait]
pub trait AppSettingsRepository: Send + Sync {
    /// The app's settings; `None` when none were ever set.
    async fn get(&self, app_id: &str) -> Result<Option<AppSettings>, RepositoryError>;
    /// Stores the app's settings whole, replacing any earlier ones.
    async fn put(
        &self,
        app_id: &str,
        settings: &AppSettings,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), RepositoryError>;
}
