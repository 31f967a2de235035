//! The invite-mail budget of hosted mode: an account sends at most `hosted.invite_mails_per_hour`
//! invites that queue a mail in a fixed hour window, counted in the shared windows
//! (`rate_windows`), so an account limited on one replica is limited on all. The mail outbox is
//! delivered oldest first, so without it one account's invites would hold every other account's
//! verification and reset mails behind them. An invite is counted before it is stored (concurrent
//! invites cannot overtake the count) and given back when it queued no mail (a reused invite).

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::ports::RepositoryError;
use crate::ports::rate_windows::SharedWindows;

/// The quota's name in the shared windows and in the `rate_limit_hit` log line.
pub const INVITE_MAIL_QUOTA: &str = "invite-mail";
/// The window the budget is counted in.
pub const INVITE_MAIL_WINDOW: TimeDelta = TimeDelta::hours(1);

/// An invite refused because its account sent its hour's invite mails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many invites: at most {limit} invite mails per hour from one account; retry in {retry_after_ms} ms")]
pub struct InvitesLimited {
    pub retry_after_ms: u64,
    pub limit: u32,
}

/// An invite counted against its account's budget, to give back if it queued no mail.
pub(super) struct CountedInvite {
    caller: String,
    at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct InviteBudget {
    windows: Arc<dyn SharedWindows>,
    per_hour: u32,
}

impl InviteBudget {
    pub fn new(windows: Arc<dyn SharedWindows>, per_hour: u32) -> Self {
        Self { windows, per_hour }
    }

    /// Counts one invite of `caller` at `now`, or refuses it while the hour's budget is spent.
    pub(super) async fn admit(
        &self,
        caller: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<CountedInvite, InvitesLimited>, RepositoryError> {
        let refused = self
            .windows
            .admit(INVITE_MAIL_QUOTA, caller, self.per_hour, INVITE_MAIL_WINDOW, now)
            .await?;
        let Some(wait) = refused else {
            return Ok(Ok(CountedInvite {
                caller: caller.to_owned(),
                at: now,
            }));
        };
        let retry_after_ms = u64::try_from(wait.num_milliseconds()).unwrap_or(0).max(1);
        tracing::warn!(
            quota_key = INVITE_MAIL_QUOTA,
            principal_id = caller,
            retry_after_ms,
            "rate_limit_hit"
        );
        Ok(Err(InvitesLimited {
            retry_after_ms,
            limit: self.per_hour,
        }))
    }

    /// The invite queued no mail: it no longer counts. A failure to uncount is logged, not
    /// answered: the invite's own answer stands.
    pub(super) async fn give_back(&self, counted: CountedInvite) {
        if let Err(error) = self
            .windows
            .give_back(INVITE_MAIL_QUOTA, &counted.caller, INVITE_MAIL_WINDOW, counted.at)
            .await
        {
            tracing::warn!(error = ?error, quota_key = INVITE_MAIL_QUOTA, "an invite could not be uncounted");
        }
    }
}
