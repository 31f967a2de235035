//! The per-app render rate (`svc apps configure --rate-limit-per-minute N`): at most N renders
//! of one app per minute, counted in a fixed window in the database so every replica shares the
//! count. The render over it is refused before any work with `app_rate_limited` (retry
//! `next-period`) and its handshake stays valid. Apps with no rate set are not limited. A render
//! admitted here but turned away further on before any work (an empty wallet, the public-demo
//! window, a full queue, its handshake taken by another render) is given back: the rate counts
//! renders that happened.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use svc_domain::refusal::RefusalCode;

use super::AgentError;
use super::render::Refusal;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::rate_windows::SharedWindows;
use crate::services::rate_limit::WindowFull;

/// The quota's name in the shared windows.
const QUOTA: &str = "app-renders";
/// One app's window.
const WINDOW: TimeDelta = TimeDelta::minutes(1);

/// How long an app's rate is used without reading its settings again: every render asks, and
/// `svc apps configure` (another process, or another replica) changes it rarely, so a new rate
/// takes effect within this long.
const RATE_TIME_TO_LIVE: Duration = Duration::from_secs(1);

/// A render counted in its app's window, to give back if it is turned away after all.
#[derive(Debug)]
pub(super) struct AppAdmission {
    app_id: String,
    at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct AppRenderLimit {
    settings: Arc<dyn AppSettingsRepository>,
    windows: Arc<dyn SharedWindows>,
    /// App id to its rate (`None`: not limited), as last read.
    rates: moka::sync::Cache<String, Option<u32>>,
}

impl AppRenderLimit {
    pub fn new(settings: Arc<dyn AppSettingsRepository>, windows: Arc<dyn SharedWindows>) -> Self {
        Self {
            settings,
            windows,
            rates: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(RATE_TIME_TO_LIVE)
                .build(),
        }
    }

    async fn rate(&self, app_id: &str) -> Result<Option<u32>, AgentError> {
        if let Some(rate) = self.rates.get(app_id) {
            return Ok(rate);
        }
        let rate = self.settings.get(app_id).await?.and_then(|s| s.rate_limit_per_minute);
        self.rates.insert(app_id.to_owned(), rate);
        Ok(rate)
    }

    /// Counts one render of `app_id` at `now` (`Some`: counted, `None`: the app has no rate), or
    /// the refusal when its minute is spent.
    pub(super) async fn admit(
        &self,
        app_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<Option<AppAdmission>, Refusal>, AgentError> {
        let Some(limit) = self.rate(app_id).await? else {
            return Ok(Ok(None));
        };
        let Some(wait) = self.windows.admit(QUOTA, app_id, limit, WINDOW, now).await? else {
            return Ok(Ok(Some(AppAdmission {
                app_id: app_id.to_owned(),
                at: now,
            })));
        };
        let seconds = WindowFull { retry_after: wait }.retry_after_seconds();
        tracing::warn!(quota_key = QUOTA, app_id, retry_after = seconds, "rate_limit_hit");
        Ok(Err(Refusal {
            entry: RefusalCode::AppRateLimited.entry(),
            message: format!("app {app_id} allows {limit} renders per minute; the window ends in {seconds} s"),
            balance_cents_at_check: None,
        }))
    }

    /// The render admitted by `admission` was turned away before any work: it no longer counts.
    /// A failure to uncount is logged, not answered: the render's own answer is the refusal.
    pub(super) async fn give_back(&self, admission: &AppAdmission) {
        if let Err(error) = self
            .windows
            .give_back(QUOTA, &admission.app_id, WINDOW, admission.at)
            .await
        {
            tracing::warn!(error = %error, app_id = %admission.app_id, "a refused render could not be uncounted");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::TimeZone;
    use svc_domain::app_settings::AppSettings;
    use svc_domain::refusal::Retry;

    use super::*;
    use crate::ports::RepositoryError;
    use crate::testing::InMemorySharedWindows;

    #[derive(Default)]
    struct FakeSettings(HashMap<String, AppSettings>, std::sync::atomic::AtomicUsize);

    #[async_trait::async_trait]
    impl AppSettingsRepository for FakeSettings {
        async fn get(&self, app_id: &str) -> Result<Option<AppSettings>, RepositoryError> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(self.0.get(app_id).cloned())
        }
        async fn put(&self, _: &str, _: &AppSettings, _: DateTime<Utc>) -> Result<(), RepositoryError> {
            unreachable!("the limit never writes settings")
        }
    }

    fn limit_for(app: &str, rate: Option<u32>) -> AppRenderLimit {
        let mut settings = FakeSettings::default();
        settings.0.insert(
            app.into(),
            AppSettings {
                rate_limit_per_minute: rate,
                ..AppSettings::default()
            },
        );
        AppRenderLimit::new(Arc::new(settings), Arc::new(InMemorySharedWindows::default()))
    }

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 4, 10, 0, 0).unwrap()
    }

    #[tokio::test]
    async fn the_render_past_the_apps_rate_is_refused_until_the_minute_ends() {
        let limit = limit_for("a", Some(2));
        assert!(limit.admit("a", t0()).await.unwrap().is_ok());
        assert!(limit.admit("a", t0()).await.unwrap().is_ok());
        let refusal = limit
            .admit("a", t0() + TimeDelta::seconds(15))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(refusal.entry.code, "app_rate_limited");
        assert_eq!(refusal.entry.retry, Retry::NextPeriod);
        assert_eq!(
            refusal.message,
            "app a allows 2 renders per minute; the window ends in 45 s"
        );
        assert!(limit.admit("b", t0()).await.unwrap().is_ok(), "another app has no rate");
        assert!(limit.admit("a", t0() + TimeDelta::seconds(60)).await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn an_app_without_a_rate_is_not_counted() {
        let limit = limit_for("a", None);
        for _ in 0..100 {
            assert!(limit.admit("a", t0()).await.unwrap().is_ok());
        }
    }

    #[tokio::test]
    async fn the_rate_is_read_once_a_second_per_app_not_once_a_render() {
        let mut settings = FakeSettings::default();
        settings.0.insert(
            "a".into(),
            AppSettings {
                rate_limit_per_minute: Some(1_000),
                ..AppSettings::default()
            },
        );
        let settings = Arc::new(settings);
        let limit = AppRenderLimit::new(settings.clone(), Arc::new(InMemorySharedWindows::default()));
        let reads = || settings.1.load(std::sync::atomic::Ordering::Relaxed);
        for _ in 0..10 {
            assert!(limit.admit("a", t0()).await.unwrap().is_ok());
            assert!(limit.admit("b", t0()).await.unwrap().is_ok());
        }
        assert_eq!(reads(), 2, "one read per app");
        tokio::time::sleep(RATE_TIME_TO_LIVE + Duration::from_millis(100)).await;
        assert!(limit.admit("a", t0()).await.unwrap().is_ok());
        assert_eq!(reads(), 3, "read again once the rate is older than its time to live");
    }
}
