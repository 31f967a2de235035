//! The coupon-guessing budget: a caller may fail `REDEEM_FAILURES_PER_WINDOW` redemptions per
//! window (`CouponError::is_failed_guess`), counted in the shared windows (`rate_windows`), so a
//! caller limited on one replica is limited on all. An attempt is counted before the code is
//! looked at (concurrent guesses cannot overtake the count) and given back when it failed no
//! guess, so a redemption that credits a wallet never spends the budget.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use svc_domain::coupon::{REDEEM_FAILURE_WINDOW, REDEEM_FAILURES_PER_WINDOW};

use crate::ports::RepositoryError;
use crate::ports::rate_windows::SharedWindows;

/// The quota's name in the shared windows and in the `rate_limit_hit` log line.
pub const REDEEM_QUOTA: &str = "coupon-redeem";

/// A redemption refused because its caller spent the guessing budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "too many failed coupon redemptions: at most {limit} per {window_seconds} seconds; retry in {retry_after_ms} ms"
)]
pub struct RedeemLimited {
    pub retry_after_ms: u64,
    pub limit: u32,
    pub window_seconds: i64,
}

/// An attempt counted against its caller's budget, to give back if it failed no guess.
pub(super) struct CountedAttempt {
    caller: String,
    at: DateTime<Utc>,
}

#[derive(Clone)]
pub(super) struct RedemptionBudget {
    windows: Arc<dyn SharedWindows>,
}

impl RedemptionBudget {
    pub(super) fn new(windows: Arc<dyn SharedWindows>) -> Self {
        Self { windows }
    }

    /// Counts one attempt of `caller` at `now`, or refuses it while the window is spent.
    pub(super) async fn admit(
        &self,
        caller: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<CountedAttempt, RedeemLimited>, RepositoryError> {
        let refused = self
            .windows
            .admit(
                REDEEM_QUOTA,
                caller,
                REDEEM_FAILURES_PER_WINDOW,
                REDEEM_FAILURE_WINDOW,
                now,
            )
            .await?;
        let Some(wait) = refused else {
            return Ok(Ok(CountedAttempt {
                caller: caller.to_owned(),
                at: now,
            }));
        };
        let retry_after_ms = u64::try_from(wait.num_milliseconds()).unwrap_or(0).max(1);
        tracing::warn!(
            quota_key = REDEEM_QUOTA,
            principal_id = caller,
            retry_after_ms,
            "rate_limit_hit"
        );
        Ok(Err(RedeemLimited {
            retry_after_ms,
            limit: REDEEM_FAILURES_PER_WINDOW,
            window_seconds: REDEEM_FAILURE_WINDOW.num_seconds(),
        }))
    }

    /// The attempt failed no guess (it credited a wallet, or the server failed): it no longer
    /// counts. A failure to uncount is logged, not answered: the attempt's own answer stands.
    pub(super) async fn give_back(&self, attempt: CountedAttempt) {
        if let Err(error) = self
            .windows
            .give_back(REDEEM_QUOTA, &attempt.caller, REDEEM_FAILURE_WINDOW, attempt.at)
            .await
        {
            tracing::warn!(error = ?error, quota_key = REDEEM_QUOTA, "a coupon redemption could not be uncounted");
        }
    }
}
