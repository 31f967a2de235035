//! The tool-call limiter (Document 2, Errors: "rate-limited tool call (when a limiter is wired)").
//! Off unless configured. Calls are counted per identity (the principal: a hosted user across its
//! apps; self-hosted, every key and paired client acts for the one operator and shares its
//! budget) or per app (a hosted deployment's per-app limit), in a fixed window
//! held in memory per replica. A limited call is answered as a tool result with code
//! `rate_limited` and `retryAfterMs`, never HTTP 429; the HTTP adapter owns that shape.

use std::sync::Arc;

use crate::ports::Clock;
use crate::services::agent::Caller;
use crate::services::rate_limit::{FixedWindowLimiter, WindowQuota};

/// Whose budget a tool call spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitedPer {
    /// The authenticated principal, across its apps.
    Identity,
    /// The app the call is scoped to, across its callers.
    App,
}

/// A refused call: the window ends in `retry_after_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCallLimited {
    pub retry_after_ms: u64,
    pub limit: u32,
    pub window_seconds: i64,
}

#[derive(Clone)]
pub struct ToolCallLimiter {
    per: LimitedPer,
    windows: Arc<FixedWindowLimiter<String>>,
    clock: Arc<dyn Clock>,
}

impl ToolCallLimiter {
    pub fn new(per: LimitedPer, quota: WindowQuota, clock: Arc<dyn Clock>) -> Self {
        Self {
            per,
            windows: Arc::new(FixedWindowLimiter::new(quota)),
            clock,
        }
    }

    /// Counts one tool call of `caller`, or says when it may call again.
    pub fn admit(&self, caller: &Caller) -> Result<(), ToolCallLimited> {
        let key = match self.per {
            LimitedPer::Identity => format!("identity\u{0}{}", caller.principal_id),
            LimitedPer::App => format!("app\u{0}{}", caller.app_id),
        };
        let full = match self.windows.admit(key, self.clock.now()) {
            Ok(()) => return Ok(()),
            Err(full) => full,
        };
        let quota = self.windows.quota();
        let retry_after_ms = u64::try_from(full.retry_after.num_milliseconds()).unwrap_or(0).max(1);
        tracing::warn!(quota_key = "tool-calls", app_id = %caller.app_id, retry_after_ms, "rate_limit_hit");
        Err(ToolCallLimited {
            retry_after_ms,
            limit: quota.limit,
            window_seconds: quota.window.num_seconds(),
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta, TimeZone, Utc};

    use super::*;

    struct FixedClock(DateTime<Utc>);

    impl Clock for FixedClock {
        fn now(&self) -> DateTime<Utc> {
            self.0
        }
    }

    fn caller(principal: &str, app: &str) -> Caller {
        Caller {
            principal_id: principal.into(),
            app_id: app.into(),
            key_id: None,
        }
    }

    fn limiter(per: LimitedPer) -> ToolCallLimiter {
        let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        ToolCallLimiter::new(
            per,
            WindowQuota::new(2, TimeDelta::seconds(60)),
            Arc::new(FixedClock(t0)),
        )
    }

    #[test]
    fn per_identity_the_apps_of_one_principal_share_a_budget() {
        let limit = limiter(LimitedPer::Identity);
        limit.admit(&caller("u1", "a")).unwrap();
        limit.admit(&caller("u1", "b")).unwrap();
        let refused = limit.admit(&caller("u1", "c")).unwrap_err();
        assert_eq!(refused.retry_after_ms, 60_000);
        limit.admit(&caller("u2", "a")).unwrap();
    }

    #[test]
    fn per_app_the_callers_of_one_app_share_a_budget() {
        let limit = limiter(LimitedPer::App);
        limit.admit(&caller("u1", "a")).unwrap();
        limit.admit(&caller("u2", "a")).unwrap();
        assert!(limit.admit(&caller("u3", "a")).is_err());
        limit.admit(&caller("u1", "b")).unwrap();
    }
}
