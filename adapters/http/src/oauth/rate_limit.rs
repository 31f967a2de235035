//! The per-address limit of OAuth client registrations, answered like every limit
//! (`crate::rate_limited`). Counts live in memory per replica. Pair-code attempts on the consent
//! form share `/_svc/pair`'s budget (`crate::Pairing::check_attempt`).

use std::net::IpAddr;
use std::sync::Arc;

use chrono::TimeDelta;
use poem::Response;
use svc_application::ports::Clock;
use svc_application::services::rate_limit::{FixedWindowLimiter, WindowQuota, address_key};

/// Document 2, Limits: 10 client registrations per 10 minutes per client address, fixed window.
pub const REGISTRATIONS_PER_WINDOW: u32 = 10;
pub const REGISTRATION_WINDOW_SECONDS: u64 = 600;

/// A fixed window per address: the spec's "N per period".
pub(super) struct PerAddressLimit {
    limiter: FixedWindowLimiter<IpAddr>,
    clock: Arc<dyn Clock>,
    quota_key: &'static str,
    message: &'static str,
}

impl PerAddressLimit {
    /// 10 per 10 minutes in a fixed window: the 11th is refused until the window ends.
    pub(super) fn registrations(clock: Arc<dyn Clock>) -> Self {
        let window = TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64);
        Self {
            limiter: FixedWindowLimiter::new(WindowQuota::new(REGISTRATIONS_PER_WINDOW, window)),
            clock,
            quota_key: "oauth-register",
            message: "too many client registrations",
        }
    }

    /// Counts one request from `ip`; the 429 answer when its window is spent.
    pub(super) fn check(&self, ip: IpAddr) -> Option<Response> {
        let full = self.limiter.admit(address_key(ip), self.clock.now()).err()?;
        Some(crate::rate_limited::rate_limited(
            self.quota_key,
            ip,
            self.message,
            full.retry_after_seconds(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Utc};
    use poem::http::StatusCode;

    use super::*;

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

    fn retry_after(response: &Response) -> u64 {
        response.headers()["retry-after"].to_str().unwrap().parse().unwrap()
    }

    #[test]
    fn the_eleventh_registration_is_refused_until_the_window_ends() {
        let clock = Arc::new(StoppedClock(Mutex::new(Utc::now())));
        let limit = PerAddressLimit::registrations(clock.clone());
        let ip = IpAddr::from([203, 0, 113, 9]);
        for n in 0..REGISTRATIONS_PER_WINDOW {
            assert!(limit.check(ip).is_none(), "registration {}", n + 1);
        }
        let refused = limit.check(ip).expect("the 11th is refused");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry_after(&refused), REGISTRATION_WINDOW_SECONDS);
        assert!(
            limit.check(IpAddr::from([203, 0, 113, 10])).is_none(),
            "another address has its own window"
        );

        clock.advance(TimeDelta::seconds(60));
        let still = limit.check(ip).expect("still refused a minute later");
        assert_eq!(retry_after(&still), REGISTRATION_WINDOW_SECONDS - 60);

        clock.advance(TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64 - 60));
        assert!(limit.check(ip).is_none(), "a new window opens when the old one ends");
    }
}
