//! The sweep of authorization codes. Consent mints the key before the client redeems its code,
//! so a code that expires unredeemed (the host crashed, the person closed the tab) would leave an
//! active key that no client holds, listed among the person's keys for ever. The sweep revokes
//! those keys, then deletes codes long past their expiry.

use chrono::TimeDelta;

use super::OAuthService;
use crate::ports::RepositoryError;

/// How long a redeemed or settled code is kept after its expiry: a replay within it still
/// revokes the key the code carried (RFC 6749 section 4.1.2); after it, a replay is an unknown code.
pub const SETTLED_CODES_KEPT: TimeDelta = TimeDelta::days(1);

/// Codes settled per round, so one sweep's statements stay short whatever piled up.
const SETTLED_PER_ROUND: u64 = 500;

/// What one sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CodeSweep {
    /// Keys revoked because their code expired unredeemed.
    pub revoked: usize,
    /// Codes deleted, long past their expiry.
    pub forgotten: u64,
}

impl OAuthService {
    /// Revokes the key of every code that expired unredeemed, then deletes the codes that expired
    /// more than [`SETTLED_CODES_KEPT`] ago. Safe on every replica at once.
    pub async fn sweep_codes(&self) -> Result<CodeSweep, RepositoryError> {
        let mut sweep = CodeSweep::default();
        loop {
            let now = self.ports.clock.now();
            let settled = self.ports.codes.settle_unredeemed(now, SETTLED_PER_ROUND).await?;
            for grant in &settled {
                self.revoke_quietly(grant).await;
            }
            sweep.revoked += settled.len();
            if (settled.len() as u64) < SETTLED_PER_ROUND {
                break;
            }
        }
        let before = self.ports.clock.now() - SETTLED_CODES_KEPT;
        sweep.forgotten = self.ports.codes.forget_expired(before).await?;
        Ok(sweep)
    }

    /// How often the sweep should run: a stray key outlives its code by at most this.
    pub fn code_sweep_interval(&self) -> std::time::Duration {
        let lifetime = self.code_lifetime.to_std().unwrap_or_default();
        lifetime.clamp(std::time::Duration::from_secs(1), std::time::Duration::from_secs(300))
    }
}
