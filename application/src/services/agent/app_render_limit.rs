//! The per-app render rate (`svc apps configure --rate-limit-per-minute N`): at most N renders
//! of one app per minute, counted in a fixed window in the database so every replica shares the
//! count. The render over it is refused before any work with `app_rate_limited` (retry
//! `next-period`) and its handshake stays valid. Apps with no rate set are not limited.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use svc_domain::refusal::RefusalCode;

use super::AgentError;
use super::render::Refusal;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::rate_windows::SharedWindows;
use crate::services::rate_limit::WindowFull;

/// The quota's name in the shared windows.
const QUOTA: &str = "app-renders";

#[derive(Clone)]
pub struct AppRenderLimit {
    settings: Arc<dyn AppSettingsRepository>,
    windows: Arc<dyn SharedWindows>,
}

impl AppRenderLimit {
    pub fn new(settings: Arc<dyn AppSettingsRepository>, windows: Arc<dyn SharedWindows>) -> Self {
        Self { settings, windows }
    }

    /// Counts one render of `app_id` at `now`, or the refusal when its minute is spent.
    pub(super) async fn admit(&self, app_id: &str, now: DateTime<Utc>) -> Result<Result<(), Refusal>, AgentError> {
        let Some(limit) = self
            .settings
            .get(app_id)
            .await?
            .and_then(|s| s.rate_limit_per_minute)
        else {
            return Ok(Ok(()));
        };
        let Some(wait) = self.windows.admit(QUOTA, app_id, limit, TimeDelta::minutes(1), now).await? else {
            return Ok(Ok(()));
        };
        let seconds = WindowFull { retry_after: wait }.retry_after_seconds();
        tracing::warn!(quota_key = QUOTA, app_id, retry_after = seconds, "rate_limit_hit");
        Ok(Err(Refusal {
            entry: RefusalCode::AppRateLimited.entry(),
            message: format!(
                "app {app_id} allows {limit} renders per minute; the window ends in {seconds} s"
            ),
            balance_cents_at_check: None,
        }))
    }
}
