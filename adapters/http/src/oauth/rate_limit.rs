//! Per-address rate limits of the OAuth routes, answered like the pairing route's (Document 2,
//! Errors): 429, `Retry-After` in seconds and `{ error: { code: "rate_limited", message,
//! retryAfter } }`, and a `rate_limit_hit` log line naming the quota key. Counts live in memory
//! per replica.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use chrono::TimeDelta;
use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use poem::http::StatusCode;
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::json;
use svc_application::ports::Clock;
use svc_application::services::rate_limit::{FixedWindowLimiter, WindowQuota, address_key};

use crate::PAIR_ATTEMPTS_PER_MINUTE;

/// Document 2, Limits: 10 client registrations per 10 minutes per client address, fixed window.
pub const REGISTRATIONS_PER_WINDOW: u32 = 10;
pub const REGISTRATION_WINDOW_SECONDS: u64 = 600;

/// Addresses remembered before idle ones are forgotten (token buckets).
const TRACKED_ADDRESSES: usize = 10_000;

pub(super) struct PerAddressLimit {
    budget: Budget,
    quota_key: &'static str,
    message: &'static str,
}

enum Budget {
    /// A fixed window per address: the spec's "N per period" (registrations).
    Window {
        limiter: FixedWindowLimiter<IpAddr>,
        clock: Arc<dyn Clock>,
    },
    /// A token bucket per address, like `POST /_svc/pair` (pair-code guesses).
    Bucket(DefaultKeyedRateLimiter<IpAddr>),
}

impl PerAddressLimit {
    /// 10 per 10 minutes in a fixed window: the 11th is refused until the window ends.
    pub(super) fn registrations(clock: Arc<dyn Clock>) -> Self {
        let window = TimeDelta::seconds(REGISTRATION_WINDOW_SECONDS as i64);
        Self {
            budget: Budget::Window {
                limiter: FixedWindowLimiter::new(WindowQuota::new(REGISTRATIONS_PER_WINDOW, window)),
                clock,
            },
            quota_key: "oauth-register",
            message: "too many client registrations",
        }
    }

    /// The consent form's pair-code guesses, limited like `POST /_svc/pair`: a 6-digit code must
    /// not be guessable through another door.
    pub(super) fn pair_code_attempts() -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(PAIR_ATTEMPTS_PER_MINUTE).expect("non-zero"));
        Self {
            budget: Budget::Bucket(RateLimiter::keyed(quota)),
            quota_key: "oauth-consent-pair-code",
            message: "too many pair code attempts",
        }
    }

    /// Counts one request from `ip`; the 429 answer when its budget is spent.
    pub(super) fn check(&self, ip: IpAddr) -> Option<Response> {
        let retry_after = self.retry_after(ip)?;
        tracing::warn!(quota_key = self.quota_key, %ip, retry_after, "rate_limit_hit");
        let body = json!({ "error": { "code": "rate_limited", "message": self.message, "retryAfter": retry_after } });
        let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
        response.headers_mut().insert("retry-after", retry_after.into());
        Some(response)
    }

    /// Seconds until `ip` may try again, when it may not now.
    fn retry_after(&self, ip: IpAddr) -> Option<u64> {
        match &self.budget {
            Budget::Window { limiter, clock } => limiter
                .admit(address_key(ip), clock.now())
                .err()
                .map(|full| full.retry_after_seconds()),
            Budget::Bucket(limiter) => {
                if limiter.len() > TRACKED_ADDRESSES {
                    limiter.retain_recent();
                }
                let not_until = limiter.check_key(&ip).err()?;
                Some(not_until.wait_time_from(DefaultClock::default().now()).as_secs().max(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Utc};

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

    #[test]
    fn pair_code_guesses_are_limited_per_minute() {
        let limit = PerAddressLimit::pair_code_attempts();
        let ip = IpAddr::from([203, 0, 113, 9]);
        for _ in 0..PAIR_ATTEMPTS_PER_MINUTE {
            assert!(limit.check(ip).is_none());
        }
        assert_eq!(limit.check(ip).unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
    }
}
