//! A render session: active until its TTL elapses, with a head epoch that moves forward on every
//! update that changes props (the previous card is frozen as history) and stays put on an amend
//! or a no-op update. A failed render commits an error session that is never active.

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

/// Bounds of an explicit `ttlSeconds` (Document 1 leaves them to us): one minute to 30 days.
pub const MIN_TTL_SECONDS: u64 = 60;
pub const MAX_TTL_SECONDS: u64 = 30 * 24 * 3600;

/// A read's heartbeat is recorded at this resolution: a read within it of the last recorded
/// activity writes nothing and reports the stored times, so a busy session costs one durable
/// write per second instead of one per read, and what a read reports is always what is stored.
pub const HEARTBEAT_RESOLUTION: Duration = Duration::seconds(1);

/// Warning returned with `updated: false`.
pub const NO_OP_WARNING: &str = "props unchanged: nothing was repainted and no new card was minted";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    Active,
    Expired,
    /// An error session: a render that ran and produced nothing.
    Failed,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Expired => "expired",
            Self::Failed => "failed",
        }
    }
}

/// Which mount a session is (Document 1, Session `variant`). A `render` session is a React
/// component the mount runtime paints; an `mcpApps` session is a self-contained MCP-Apps HTML
/// document (a manifest UI declared with `"mount": "mcpApps"`) that the host mounts as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionVariant {
    Render,
    McpApps,
}

impl SessionVariant {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Render => "render",
            Self::McpApps => "mcpApps",
        }
    }

    /// Whether the session has a component (TSX source, a compiled module): only `render`.
    pub fn has_component(self) -> bool {
        self == Self::Render
    }

    /// Whether the session keeps a `contextSnapshot`: only `render` (Document 1); an MCP-Apps
    /// document does not declare its context slots to the runtime.
    pub fn keeps_context_snapshot(self) -> bool {
        self == Self::Render
    }

    /// Whether a host without the MCP-Apps capability can mount it: a `render` session through the
    /// mount runtime, an `mcpApps` document only in an MCP-Apps host.
    pub fn mounts_without_mcp_apps(self) -> bool {
        self == Self::Render
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("ttlSeconds must be an integer from {MIN_TTL_SECONDS} to {MAX_TTL_SECONDS}")]
    TtlOutOfRange,
    #[error("the session expired")]
    Expired,
    #[error("the render failed; it has no props to change")]
    NotRendered,
}

/// A card frozen when the head moved past it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenCard {
    pub epoch: u32,
    pub props: Value,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateEffect {
    /// The head moved to `epoch`; `frozen` is the card it left behind.
    Advanced { epoch: u32, frozen: FrozenCard },
    /// The props were equal: nothing minted.
    NoOp,
}

/// The mutable core of a session: the rules need no more than this.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHead {
    pub status: SessionStatus,
    pub epoch: u32,
    pub props: Value,
    pub last_activity_at: DateTime<Utc>,
    /// Sliding lifetime: the session expires `ttl` after its last activity.
    pub ttl_seconds: u64,
}

/// Checks an agent-supplied `ttlSeconds`.
pub fn checked_ttl(ttl_seconds: u64) -> Result<u64, SessionError> {
    if (MIN_TTL_SECONDS..=MAX_TTL_SECONDS).contains(&ttl_seconds) {
        Ok(ttl_seconds)
    } else {
        Err(SessionError::TtlOutOfRange)
    }
}

/// Whether `sessions.default_ttl_seconds` can be a session's lifetime: at least a second. A
/// default may be shorter than an explicit `ttlSeconds` (tests and demos that watch cards
/// expire) and longer (an operator's choice, as hosted renders live for a century); one past
/// the last date a date can hold never expires ([`SessionHead::expires_at`]).
pub fn is_usable_default_ttl(ttl_seconds: u64) -> bool {
    ttl_seconds >= 1
}

/// When a session last active at `last_activity_at` expires, `ttl_seconds` later. Saturating: a
/// lifetime past what a date can hold never expires, it does not panic.
pub fn expires_at(last_activity_at: DateTime<Utc>, ttl_seconds: u64) -> DateTime<Utc> {
    let ttl = i64::try_from(ttl_seconds)
        .ok()
        .and_then(Duration::try_seconds)
        .unwrap_or(Duration::MAX);
    last_activity_at
        .checked_add_signed(ttl)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A session's status as of `now`, from the one stored (a row holds `Active` or `Failed`): an
/// active session past `expires_at` is expired.
pub fn status_at(stored: SessionStatus, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> SessionStatus {
    match stored {
        SessionStatus::Active if now >= expires_at => SessionStatus::Expired,
        other => other,
    }
}

/// Whether the stored rows of a session expiring at `expires_at` may be deleted at `now`: it has
/// been past its expiry for `grace` (a failed render's error session too, whose lifetime ends
/// alike). Until then it answers as expired (`svc_consume`'s `status: "expired"`, its undrained
/// gestures still drained); after, as a session that never existed (-32002). Saturating: a
/// session that never expires is never deleted.
pub fn rows_may_go(expires_at: DateTime<Utc>, grace: Duration, now: DateTime<Utc>) -> bool {
    expires_at
        .checked_add_signed(grace)
        .is_some_and(|kept_until| now >= kept_until)
}

impl SessionHead {
    /// A fresh active session at epoch 1.
    pub fn rendered(props: Value, ttl_seconds: u64, now: DateTime<Utc>) -> Self {
        Self {
            status: SessionStatus::Active,
            epoch: 1,
            props,
            last_activity_at: now,
            ttl_seconds,
        }
    }

    /// The error session a failed render commits.
    pub fn failed(ttl_seconds: u64, now: DateTime<Utc>) -> Self {
        Self {
            status: SessionStatus::Failed,
            epoch: 0,
            props: Value::Null,
            last_activity_at: now,
            ttl_seconds,
        }
    }

    pub fn expires_at(&self) -> DateTime<Utc> {
        expires_at(self.last_activity_at, self.ttl_seconds)
    }

    /// The status as of `now`: an active session whose TTL actually elapsed is expired.
    pub fn status_at(&self, now: DateTime<Utc>) -> SessionStatus {
        status_at(self.status, self.expires_at(), now)
    }

    fn ensure_live(&self, now: DateTime<Utc>) -> Result<(), SessionError> {
        match self.status_at(now) {
            SessionStatus::Active => Ok(()),
            SessionStatus::Expired => Err(SessionError::Expired),
            SessionStatus::Failed => Err(SessionError::NotRendered),
        }
    }

    /// A read's activity heartbeat: the TTL restarts, unless the last recorded activity is
    /// within [`HEARTBEAT_RESOLUTION`] of `now`. `true` when the head changed and must be saved.
    pub fn touch(&mut self, now: DateTime<Utc>) -> bool {
        if self.heartbeat_due(now) {
            self.last_activity_at = now;
            return true;
        }
        false
    }

    /// Whether [`Self::touch`] at `now` would move the heartbeat (and so write).
    pub fn heartbeat_due(&self, now: DateTime<Utc>) -> bool {
        now - self.last_activity_at >= HEARTBEAT_RESOLUTION && self.status_at(now) == SessionStatus::Active
    }

    /// `svc_update`: new props make a new card at epoch N+1; equal props are a no-op.
    pub fn update(&mut self, props: Value, now: DateTime<Utc>) -> Result<UpdateEffect, SessionError> {
        self.ensure_live(now)?;
        self.last_activity_at = now;
        if props == self.props {
            return Ok(UpdateEffect::NoOp);
        }
        let frozen = FrozenCard {
            epoch: self.epoch,
            props: std::mem::replace(&mut self.props, props),
        };
        self.epoch += 1;
        Ok(UpdateEffect::Advanced {
            epoch: self.epoch,
            frozen,
        })
    }

    /// `svc_amend`: repaints the head in place at epoch N; `false` when the props were equal.
    pub fn amend(&mut self, props: Value, now: DateTime<Utc>) -> Result<bool, SessionError> {
        self.ensure_live(now)?;
        self.last_activity_at = now;
        if props == self.props {
            return Ok(false);
        }
        self.props = props;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;
    use serde_json::json;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap()
    }

    /// One row per row of Document 1's state table for sessions.
    #[test]
    fn state_table() {
        // (none) -> active on rendered
        let head = SessionHead::rendered(json!({ "n": 1 }), 3600, t0());
        assert_eq!(head.status_at(t0()), SessionStatus::Active);
        assert_eq!(head.epoch, 1);
        // (none) -> error session on failed
        let failed = SessionHead::failed(3600, t0());
        assert_eq!(failed.status_at(t0()), SessionStatus::Failed);
        assert_eq!(failed.clone().update(json!({}), t0()), Err(SessionError::NotRendered));
        // active -> expired when the TTL actually elapses
        assert_eq!(head.status_at(t0() + Duration::seconds(3599)), SessionStatus::Active);
        assert_eq!(head.status_at(t0() + Duration::seconds(3600)), SessionStatus::Expired);
        // epoch N -> N+1 on an update that changes props; the old card is frozen
        let mut updated = head.clone();
        let effect = updated.update(json!({ "n": 2 }), t0()).unwrap();
        assert_eq!(
            effect,
            UpdateEffect::Advanced {
                epoch: 2,
                frozen: FrozenCard {
                    epoch: 1,
                    props: json!({ "n": 1 })
                }
            }
        );
        // epoch N -> N on a no-op update
        let mut same = head.clone();
        assert_eq!(same.update(json!({ "n": 1 }), t0()).unwrap(), UpdateEffect::NoOp);
        assert_eq!(same.epoch, 1);
        // epoch N -> N on amend, repainted in place
        let mut amended = head.clone();
        assert!(amended.amend(json!({ "n": 5 }), t0()).unwrap());
        assert_eq!((amended.epoch, amended.props.clone()), (1, json!({ "n": 5 })));
        assert!(!amended.amend(json!({ "n": 5 }), t0()).unwrap());
        // an expired session takes no update
        let mut old = head;
        assert_eq!(
            old.update(json!({ "n": 9 }), t0() + Duration::days(1)),
            Err(SessionError::Expired)
        );
    }

    #[test]
    fn only_a_render_variant_has_a_component_a_context_snapshot_and_a_runtime_mount() {
        let rows = [
            (SessionVariant::Render, "render", true),
            (SessionVariant::McpApps, "mcpApps", false),
        ];
        for (variant, wire, component) in rows {
            assert_eq!(variant.as_str(), wire);
            assert_eq!(variant.has_component(), component);
            assert_eq!(variant.keeps_context_snapshot(), component);
            assert_eq!(variant.mounts_without_mcp_apps(), component);
        }
    }

    #[test]
    fn activity_slides_the_expiry() {
        let mut head = SessionHead::rendered(json!({}), 60, t0());
        assert!(head.touch(t0() + Duration::seconds(50)));
        assert_eq!(head.status_at(t0() + Duration::seconds(100)), SessionStatus::Active);
    }

    #[test]
    fn a_heartbeat_within_its_resolution_records_nothing() {
        let mut head = SessionHead::rendered(json!({}), 60, t0());
        let soon = t0() + HEARTBEAT_RESOLUTION - Duration::milliseconds(1);
        assert!(!head.touch(soon));
        assert_eq!(head.last_activity_at, t0());
        let later = t0() + HEARTBEAT_RESOLUTION;
        assert!(head.touch(later));
        assert_eq!(head.last_activity_at, later);
    }

    #[test]
    fn an_expired_session_is_not_revived_by_a_heartbeat() {
        let mut head = SessionHead::rendered(json!({}), 60, t0());
        assert!(!head.touch(t0() + Duration::seconds(60)));
        assert_eq!(head.status_at(t0() + Duration::seconds(61)), SessionStatus::Expired);
    }

    #[test]
    fn an_expired_sessions_rows_go_once_its_grace_has_passed() {
        let expires = t0() + Duration::seconds(60);
        let grace = Duration::days(7);
        let rows = [
            (t0(), false, "active"),
            (expires, false, "just expired: within its grace"),
            (
                expires + grace - Duration::milliseconds(1),
                false,
                "the last moment of its grace",
            ),
            (expires + grace, true, "its grace has passed"),
            (expires + grace + Duration::days(400), true, "long after"),
        ];
        for (now, go, why) in rows {
            assert_eq!(rows_may_go(expires, grace, now), go, "{why}");
        }
        assert!(rows_may_go(expires, Duration::zero(), expires), "no grace: at expiry");
        let never = expires_at(t0(), u64::MAX);
        assert!(
            !rows_may_go(never, grace, DateTime::<Utc>::MAX_UTC),
            "a session that never expires stays"
        );
    }

    #[test]
    fn ttl_bounds() {
        assert_eq!(checked_ttl(59), Err(SessionError::TtlOutOfRange));
        assert_eq!(checked_ttl(60), Ok(60));
        assert_eq!(checked_ttl(MAX_TTL_SECONDS), Ok(MAX_TTL_SECONDS));
        assert_eq!(checked_ttl(MAX_TTL_SECONDS + 1), Err(SessionError::TtlOutOfRange));
    }

    #[test]
    fn a_default_ttl_may_be_shorter_or_longer_than_an_explicit_one_but_not_zero() {
        assert!(!is_usable_default_ttl(0));
        assert!(is_usable_default_ttl(1));
        assert!(is_usable_default_ttl(MAX_TTL_SECONDS + 1));
        assert!(is_usable_default_ttl(u64::MAX));
    }

    #[test]
    fn a_lifetime_past_the_last_date_never_expires_and_does_not_panic() {
        for ttl in [u64::MAX, i64::MAX as u64, 10_000_000_000_000] {
            let head = SessionHead::rendered(json!({}), ttl, t0());
            assert_eq!(head.expires_at(), DateTime::<Utc>::MAX_UTC);
            assert_eq!(head.status_at(t0() + Duration::days(365 * 1000)), SessionStatus::Active);
        }
    }

    proptest! {
        /// Whatever sequence of updates and amends arrives, the head epoch never goes down.
        #[test]
        fn epochs_only_grow(ops in proptest::collection::vec((any::<bool>(), 0u8..4), 0..40)) {
            let mut head = SessionHead::rendered(json!({ "v": 0 }), 3600, t0());
            let mut last = head.epoch;
            for (is_update, value) in ops {
                let props = json!({ "v": value });
                if is_update { let _ = head.update(props, t0()); } else { let _ = head.amend(props, t0()); }
                prop_assert!(head.epoch >= last);
                last = head.epoch;
            }
        }
    }
}
