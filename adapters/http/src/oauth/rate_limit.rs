//! Per-address rate limits of the OAuth routes, answered like the pairing route's (Document 2,
//! Errors): 429, `Retry-After` in seconds and `{ error: { code: "rate_limited", message,
//! retryAfter } }`, and a `rate_limit_hit` log line naming the quota key. Windows live in memory
//! per replica.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use poem::http::StatusCode;
use poem::web::Json;
use poem::{IntoResponse, Request, Response};
use serde_json::json;

use crate::PAIR_ATTEMPTS_PER_MINUTE;

/// Document 2, Limits: 10 client registrations per 10 minutes per client address.
pub const REGISTRATIONS_PER_WINDOW: u32 = 10;
pub const REGISTRATION_WINDOW_SECONDS: u64 = 600;

/// Addresses remembered before idle ones are forgotten.
const TRACKED_ADDRESSES: usize = 10_000;

pub(super) struct PerAddressLimit {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    quota_key: &'static str,
    message: &'static str,
}

impl PerAddressLimit {
    /// A burst of 10, refilled one every minute: 10 per 10 minutes.
    pub(super) fn registrations() -> Self {
        let refill = Duration::from_secs(REGISTRATION_WINDOW_SECONDS / u64::from(REGISTRATIONS_PER_WINDOW));
        let quota = Quota::with_period(refill)
            .expect("non-zero period")
            .allow_burst(NonZeroU32::new(REGISTRATIONS_PER_WINDOW).expect("non-zero"));
        Self::new(quota, "oauth-register", "too many client registrations")
    }

    /// The consent form's pair-code guesses, limited like `POST /_svc/pair`: a 6-digit code must
    /// not be guessable through another door.
    pub(super) fn pair_code_attempts() -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(PAIR_ATTEMPTS_PER_MINUTE).expect("non-zero"));
        Self::new(quota, "oauth-consent-pair-code", "too many pair code attempts")
    }

    fn new(quota: Quota, quota_key: &'static str, message: &'static str) -> Self {
        Self {
            limiter: RateLimiter::keyed(quota),
            quota_key,
            message,
        }
    }

    /// Counts one request from `ip`; the 429 answer when its budget is spent.
    pub(super) fn check(&self, ip: IpAddr) -> Option<Response> {
        if self.limiter.len() > TRACKED_ADDRESSES {
            self.limiter.retain_recent();
        }
        let Err(not_until) = self.limiter.check_key(&ip) else {
            return None;
        };
        let retry_after = not_until.wait_time_from(DefaultClock::default().now()).as_secs().max(1);
        tracing::warn!(quota_key = self.quota_key, %ip, retry_after, "rate_limit_hit");
        let body = json!({ "error": { "code": "rate_limited", "message": self.message, "retryAfter": retry_after } });
        let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
        response.headers_mut().insert("retry-after", retry_after.into());
        Some(response)
    }
}

/// The address a request is counted against: the peer, or with `trust_proxy` the last
/// `X-Forwarded-For` entry (the one the proxy itself wrote; earlier entries are client-supplied).
pub(super) fn client_ip(req: &Request, trust_proxy: bool) -> IpAddr {
    let forwarded = trust_proxy
        .then(|| req.header("x-forwarded-for"))
        .flatten()
        .and_then(|value| value.rsplit(',').next())
        .and_then(|last| parse_address(last.trim()));
    forwarded
        .or_else(|| req.remote_addr().as_socket_addr().map(|a| a.ip()))
        .unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

/// `203.0.113.9`, `2001:db8::1`, or either with a port (`[2001:db8::1]:443`).
fn parse_address(value: &str) -> Option<IpAddr> {
    value
        .parse::<IpAddr>()
        .ok()
        .or_else(|| value.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eleventh_registration_is_refused() {
        let limit = PerAddressLimit::registrations();
        let ip = IpAddr::from([203, 0, 113, 9]);
        for n in 0..REGISTRATIONS_PER_WINDOW {
            assert!(limit.check(ip).is_none(), "registration {}", n + 1);
        }
        let refused = limit.check(ip).expect("refused");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(
            limit.check(IpAddr::from([203, 0, 113, 10])).is_none(),
            "another address has its own budget"
        );
    }

    #[test]
    fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
        let req = Request::builder()
            .header("x-forwarded-for", "198.51.100.1, 203.0.113.9")
            .finish();
        assert_eq!(client_ip(&req, true), IpAddr::from([203, 0, 113, 9]));
        assert_ne!(client_ip(&req, false), IpAddr::from([203, 0, 113, 9]));
        let with_port = Request::builder()
            .header("x-forwarded-for", "[2001:db8::1]:443")
            .finish();
        assert_eq!(client_ip(&with_port, true), "2001:db8::1".parse::<IpAddr>().unwrap());
    }
}
