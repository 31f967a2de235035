//! The per-address limits of OAuth client registrations and of sign-ins begun at an external
//! provider, answered like every limit
//! (`crate::rate_limited`). Windows are counted in the database (`SharedWindows`), so replicas
//! share them. Pair-code attempts on the consent form share `/_svc/pair`'s budget
//! (`crate::Pairing::check_attempt`).

use std::net::IpAddr;
use std::sync::Arc;

use chrono::TimeDelta;
use poem::Response;
use svc_application::ports::Clock;
use svc_application::ports::rate_windows::SharedWindows;
use svc_application::services::rate_limit::address_key;

/// Document 2, Limits: 10 client registrations per 10 minutes per client address, fixed window.
pub const REGISTRATIONS_PER_WINDOW: u32 = 10;
pub const REGISTRATION_WINDOW_SECONDS: u64 = 600;
/// Not in the spec: a person signs in a few times an hour; a script that begins sign-ins by the
/// thousand would fill the store of pending ones.
pub const EXTERNAL_SIGN_INS_PER_WINDOW: u32 = 20;
pub const EXTERNAL_SIGN_IN_WINDOW_SECONDS: u64 = 600;

/// A fixed window per address: the spec's "N per period".
pub(super) struct PerAddressLimit {
    windows: Arc<dyn SharedWindows>,
    clock: Arc<dyn Clock>,
    quota_key: &'static str,
    message: &'static str,
    limit: u32,
    window: TimeDelta,
}

impl PerAddressLimit {
    /// 10 per 10 minutes in a fixed window: the 11th is refused until the window ends.
    pub(super) fn registrations(windows: Arc<dyn SharedWindows>, clock: Arc<dyn Clock>) -> Self {
        Self {
            windows,
            clock,
            quota_key: "oauth-register",
            message: "too many client registrations",
            limit: REGISTRATIONS_PER_WINDOW,
            window: TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64),
        }
    }

    /// 20 sign-ins begun at the external provider per 10 minutes: each stores the request until
    /// the provider returns, so an address may not fill the store with them.
    pub(super) fn external_sign_ins(windows: Arc<dyn SharedWindows>, clock: Arc<dyn Clock>) -> Self {
        Self {
            windows,
            clock,
            quota_key: "oauth-external-sign-in",
            message: "too many sign-ins begun at the identity provider",
            limit: EXTERNAL_SIGN_INS_PER_WINDOW,
            window: TimeDelta::seconds(EXTERNAL_SIGN_IN_WINDOW_SECONDS as i64),
        }
    }

    /// Counts one request from `ip`: refused with the 429 every limit answers when its window is
    /// spent, or [`Refusal::Uncounted`] when the database cannot count it (each route answers
    /// that in its own form).
    pub(super) async fn check(&self, ip: IpAddr) -> Result<(), Refusal> {
        let key = address_key(ip).to_string();
        let counted = self
            .windows
            .admit(self.quota_key, &key, self.limit, self.window, self.clock.now())
            .await;
        match counted {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => {
                let retry_after = u64::try_from(wait.num_milliseconds())
                    .unwrap_or(0)
                    .div_ceil(1000)
                    .max(1);
                Err(Refusal::Limited(crate::rate_limited::rate_limited(
                    self.quota_key,
                    ip,
                    self.message,
                    retry_after,
                )))
            }
            Err(cause) => {
                tracing::error!(error = ?cause, quota_key = self.quota_key, "could not count a request");
                Err(Refusal::Uncounted)
            }
        }
    }
}

/// Why [`PerAddressLimit::check`] did not let a request through.
pub(super) enum Refusal {
    /// The address's window is spent: the 429 answer.
    Limited(Response),
    /// The database could not count the request; it is not served uncounted.
    Uncounted,
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Utc};
    use svc_application::ports::RepositoryError;
    use svc_application::services::rate_limit::{FixedWindowLimiter, WindowQuota};

    use poem::http::StatusCode;

    use super::*;

    /// The same fixed-window rule in memory (the database's is tested in svc-sql).
    struct MemoryWindows(FixedWindowLimiter<String>);

    #[async_trait::async_trait]
    impl SharedWindows for MemoryWindows {
        async fn admit(
            &self,
            _: &str,
            key: &str,
            _: u32,
            _: TimeDelta,
            now: DateTime<Utc>,
        ) -> Result<Option<TimeDelta>, RepositoryError> {
            Ok(self.0.admit(key.to_owned(), now).err().map(|full| full.retry_after))
        }
    }

    struct StoppedClock(Mutex<DateTime<Utc>>);

    impl StoppedClock {
        fn advance(&self, by: TimeDelta) {
            *self.0.lock().unwrap() += by;
        }
    }

    impl Clock for StoppedClock {
        fn now(&self) -> DateTime<Utc> {
            *self.0.lock().unwrap()
        }
    }

    fn limited(checked: Result<(), Refusal>) -> Response {
        match checked {
            Err(Refusal::Limited(answer)) => answer,
            Err(Refusal::Uncounted) => panic!("counted in memory"),
            Ok(()) => panic!("refused"),
        }
    }

    fn retry_after(response: &Response) -> u64 {
        response.headers()["retry-after"].to_str().unwrap().parse().unwrap()
    }

    #[tokio::test]
    async fn the_eleventh_registration_is_refused_until_the_window_ends() {
        let clock = Arc::new(StoppedClock(Mutex::new(Utc::now())));
        let quota = WindowQuota::new(
            REGISTRATIONS_PER_WINDOW,
            TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64),
        );
        let windows = Arc::new(MemoryWindows(FixedWindowLimiter::new(quota)));
        let limit = PerAddressLimit::registrations(windows, clock.clone());
        let ip = IpAddr::from([203, 0, 113, 9]);
        for n in 0..REGISTRATIONS_PER_WINDOW {
            assert!(limit.check(ip).await.is_ok(), "registration {}", n + 1);
        }
        let refused = limited(limit.check(ip).await);
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry_after(&refused), REGISTRATION_WINDOW_SECONDS);
        assert!(
            limit.check(IpAddr::from([203, 0, 113, 10])).await.is_ok(),
            "another address has its own window"
        );

        clock.advance(TimeDelta::seconds(60));
        let still = limited(limit.check(ip).await);
        assert_eq!(retry_after(&still), REGISTRATION_WINDOW_SECONDS - 60);

        clock.advance(TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64 - 60));
        assert!(
            limit.check(ip).await.is_ok(),
            "a new window opens when the old one ends"
        );
    }
}
