//! The public-demo generation limit (Document 2, Limits: `--public-demo`, 30 generations per 10
//! minutes per remote IP, fixed window). Only a cold generation counts: a render served from the
//! blueprint cache runs no generation. The render over the limit is refused before any work
//! (Document 1: "render-rate caps are returned refusals") with `issuer_rate_limited`, and its
//! handshake stays usable once the window ends.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use svc_domain::refusal::RefusalCode;

use super::render::Refusal;
use crate::services::rate_limit::{FixedWindowLimiter, WindowQuota, address_key};

/// Cold generations per remote address in a fixed window; counts live in memory per replica.
#[derive(Clone)]
pub struct GenerationLimit {
    windows: Arc<FixedWindowLimiter<IpAddr>>,
}

impl GenerationLimit {
    pub fn per_address(quota: WindowQuota) -> Self {
        Self {
            windows: Arc::new(FixedWindowLimiter::new(quota)),
        }
    }

    /// Counts one generation from `origin`, or refuses it. A request whose address is unknown
    /// counts against `0.0.0.0`, shared by all such requests.
    pub(super) fn admit(&self, origin: Option<IpAddr>, now: DateTime<Utc>) -> Result<Admission, Refusal> {
        let address = address_key(origin.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
        let full = match self.windows.admit(address, now) {
            Ok(()) => return Ok(Admission { address, at: now }),
            Err(full) => full,
        };
        let WindowQuota { limit, window } = self.windows.quota();
        let retry_after = full.retry_after_seconds();
        tracing::warn!(quota_key = "public-demo-generations", %address, retry_after, "rate_limit_hit");
        Err(Refusal {
            entry: RefusalCode::IssuerRateLimited.entry(),
            message: format!(
                "this public demo allows {limit} generations per {} seconds from one address; the window ends in {retry_after} s",
                window.num_seconds()
            ),
            balance_cents_at_check: None,
        })
    }
}

/// A counted generation, until it is known to run.
#[derive(Debug)]
pub(super) struct Admission {
    address: IpAddr,
    at: DateTime<Utc>,
}

impl GenerationLimit {
    /// The generation did not run after all (the queue turned it away): it no longer counts.
    pub(super) fn give_back(&self, admission: &Admission) {
        self.windows.give_back(&admission.address, admission.at);
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};
    use svc_domain::refusal::Retry;

    use super::*;

    #[test]
    fn the_generation_over_the_limit_is_refused_as_issuer_rate_limited() {
        let limit = GenerationLimit::per_address(WindowQuota::new(2, TimeDelta::seconds(60)));
        let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let here = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(limit.admit(here, t0).is_ok());
        assert!(limit.admit(here, t0).is_ok());
        let refusal = limit.admit(here, t0 + TimeDelta::seconds(15)).unwrap_err();
        assert_eq!(refusal.entry.code, "issuer_rate_limited");
        assert_eq!(refusal.entry.retry, Retry::NextPeriod);
        assert!(refusal.message.contains("ends in 45 s"), "{}", refusal.message);
        assert!(limit.admit(Some(IpAddr::from([127, 0, 0, 2])), t0).is_ok());
        assert!(limit.admit(here, t0 + TimeDelta::seconds(60)).is_ok());
    }
}
