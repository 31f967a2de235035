//! The handshake record: pending until a render settles it. A `rendered` or `failed` render
//! consumes it; a `refused` render leaves it pending so the same id works once the fix lands; it
//! expires 10 minutes after creation.

use chrono::{DateTime, Duration, Utc};

/// How long a handshake record stays usable.
pub const HANDSHAKE_LIFETIME_MINUTES: i64 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeState {
    Pending,
    Consumed,
    Expired,
}

/// How a render ended, as far as its handshake cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderOutcome {
    Rendered,
    Failed,
    Refused,
}

impl RenderOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rendered => "rendered",
            Self::Failed => "failed",
            Self::Refused => "refused",
        }
    }
}

/// Where the suggestion came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Cache,
    Agent,
    Synth,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cache => "cache",
            Self::Agent => "agent",
            Self::Synth => "synth",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "cache" => Some(Self::Cache),
            "agent" => Some(Self::Agent),
            "synth" => Some(Self::Synth),
            _ => None,
        }
    }
}

/// The handshake's `action`.
///
/// - `reuse`: an exact cache match (intent, contractHash, variantKey) is served as is;
/// - `create`: nothing is cached for the intent; a new component is generated;
/// - `update`: a component is cached for the intent but under another contract or variance;
///   a new one is generated beside it;
/// - `replace`: `forceCreate` was asked while an exact match exists; a new one replaces it;
/// - `declined`: the draft cannot be agreed; no record is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeAction {
    Create,
    Reuse,
    Update,
    Replace,
    Declined,
}

impl HandshakeAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Reuse => "reuse",
            Self::Update => "update",
            Self::Replace => "replace",
            Self::Declined => "declined",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "create" => Some(Self::Create),
            "reuse" => Some(Self::Reuse),
            "update" => Some(Self::Update),
            "replace" => Some(Self::Replace),
            "declined" => Some(Self::Declined),
            _ => None,
        }
    }

    /// Chooses the action from what the cache holds.
    pub fn choose(force_create: bool, exact_match: bool, same_intent_cached: bool) -> Self {
        match (exact_match, force_create, same_intent_cached) {
            (true, false, _) => Self::Reuse,
            (true, true, _) => Self::Replace,
            (false, _, true) => Self::Update,
            (false, _, false) => Self::Create,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("the handshake expired; call svc_handshake again")]
    Expired,
    #[error("the handshake was already used by a render; call svc_handshake again")]
    AlreadyConsumed,
}

/// A handshake record's lifecycle. The agreed contract and suggestion travel beside it in the
/// application's record; only the state rules live here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeLifecycle {
    pub created_at: DateTime<Utc>,
    pub consumed_at: Option<DateTime<Utc>>,
}

impl HandshakeLifecycle {
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            created_at: now,
            consumed_at: None,
        }
    }

    pub fn expires_at(&self) -> DateTime<Utc> {
        self.created_at + Duration::minutes(HANDSHAKE_LIFETIME_MINUTES)
    }

    pub fn state(&self, now: DateTime<Utc>) -> HandshakeState {
        if self.consumed_at.is_some() {
            HandshakeState::Consumed
        } else if now >= self.expires_at() {
            HandshakeState::Expired
        } else {
            HandshakeState::Pending
        }
    }

    /// Checks that a render may start on this handshake.
    pub fn ensure_usable(&self, now: DateTime<Utc>) -> Result<(), HandshakeError> {
        match self.state(now) {
            HandshakeState::Pending => Ok(()),
            HandshakeState::Consumed => Err(HandshakeError::AlreadyConsumed),
            HandshakeState::Expired => Err(HandshakeError::Expired),
        }
    }

    /// Settles the handshake with a render's outcome.
    pub fn settle(&self, outcome: RenderOutcome, now: DateTime<Utc>) -> Result<Self, HandshakeError> {
        self.ensure_usable(now)?;
        Ok(match outcome {
            RenderOutcome::Refused => self.clone(),
            RenderOutcome::Rendered | RenderOutcome::Failed => Self {
                created_at: self.created_at,
                consumed_at: Some(now),
            },
        })
    }
}

/// The latest creation time of a handshake whose row may be deleted at `now`. Past its lifetime
/// a handshake starts no render, consumed or not (one a cancelled render gives back after it is
/// expired), and nothing else refers to it: a session keeps what it needs of it. Its row then
/// answers `expired` or `already used` for `grace` more, and after that is gone (`unknown
/// handshake`, the same INVALID_PARAMS). `None` before any such time.
pub fn rows_may_go_if_created_by(grace: Duration, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    now.checked_sub_signed(grace)?
        .checked_sub_signed(Duration::minutes(HANDSHAKE_LIFETIME_MINUTES))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap()
    }

    /// One row per row of Document 1's state table for the handshake record.
    #[test]
    fn state_table() {
        let pending = HandshakeLifecycle::new(t0());
        let soon = t0() + Duration::minutes(1);
        // (none) -> pending on a non-declined handshake
        assert_eq!(pending.state(t0()), HandshakeState::Pending);
        // pending -> consumed on rendered or failed
        for outcome in [RenderOutcome::Rendered, RenderOutcome::Failed] {
            let settled = pending.settle(outcome, soon).unwrap();
            assert_eq!(settled.state(soon), HandshakeState::Consumed);
            assert_eq!(settled.settle(outcome, soon), Err(HandshakeError::AlreadyConsumed));
        }
        // pending -> pending (unchanged) on refused
        let refused = pending.settle(RenderOutcome::Refused, soon).unwrap();
        assert_eq!(refused, pending);
        assert_eq!(refused.state(soon), HandshakeState::Pending);
        // pending -> expired after 10 minutes
        let later = t0() + Duration::minutes(HANDSHAKE_LIFETIME_MINUTES);
        assert_eq!(
            pending.state(later - Duration::milliseconds(1)),
            HandshakeState::Pending
        );
        assert_eq!(pending.state(later), HandshakeState::Expired);
        assert_eq!(
            pending.settle(RenderOutcome::Rendered, later),
            Err(HandshakeError::Expired)
        );
    }

    #[test]
    fn a_row_may_go_once_its_handshake_has_been_unusable_for_the_grace() {
        let now = t0();
        for grace in [Duration::zero(), Duration::days(7)] {
            let created_by = rows_may_go_if_created_by(grace, now).unwrap();
            let unusable_since = now - grace;
            assert_eq!(
                HandshakeLifecycle::new(created_by).state(unusable_since),
                HandshakeState::Expired
            );
            let younger = HandshakeLifecycle::new(created_by + Duration::milliseconds(1));
            assert_eq!(younger.state(unusable_since), HandshakeState::Pending);
        }
        assert_eq!(rows_may_go_if_created_by(Duration::MAX, now), None);
    }

    #[test]
    fn action_table() {
        assert_eq!(HandshakeAction::choose(false, true, true), HandshakeAction::Reuse);
        assert_eq!(HandshakeAction::choose(true, true, true), HandshakeAction::Replace);
        assert_eq!(HandshakeAction::choose(false, false, true), HandshakeAction::Update);
        assert_eq!(HandshakeAction::choose(true, false, false), HandshakeAction::Create);
    }

    fn outcome() -> impl Strategy<Value = RenderOutcome> {
        prop_oneof![
            Just(RenderOutcome::Rendered),
            Just(RenderOutcome::Failed),
            Just(RenderOutcome::Refused)
        ]
    }

    proptest! {
        /// However many renders try a handshake, at most one of them consumes it.
        #[test]
        fn consumed_at_most_once(attempts in proptest::collection::vec((outcome(), 0i64..900), 1..20)) {
            let mut record = HandshakeLifecycle::new(t0());
            let mut consumptions = 0;
            for (outcome, secs) in attempts {
                let now = t0() + Duration::seconds(secs);
                if let Ok(next) = record.settle(outcome, now) {
                    if next.consumed_at.is_some() && record.consumed_at.is_none() {
                        consumptions += 1;
                    }
                    record = next;
                }
            }
            prop_assert!(consumptions <= 1);
        }
    }
}
