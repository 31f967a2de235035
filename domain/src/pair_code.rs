//! The pair code printed at boot: six digits that pair a client (`POST /_svc/pair`, the OAuth
//! consent form). A code stays usable for a while after its first use, so the operator can pair
//! the clients of one sitting, then it is spent and a fresh one replaces it: a code seen once
//! (on a screen, in a log) does not open the server for ever.

use chrono::{DateTime, TimeDelta, Utc};
use subtle::ConstantTimeEq;

/// How long a code keeps working after its first use.
pub const PAIR_CODE_REUSE_MINUTES: i64 = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairCode {
    code: String,
    first_used_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PairCodeError {
    #[error("wrong pair code")]
    Wrong,
}

impl PairCode {
    /// (none) -> fresh.
    pub fn issued(code: String) -> Self {
        Self {
            code,
            first_used_at: None,
        }
    }

    /// A code read back from storage.
    pub fn stored(code: String, first_used_at: Option<DateTime<Utc>>) -> Self {
        Self { code, first_used_at }
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// When the reuse window opened, if the code was used.
    pub fn first_used_at(&self) -> Option<DateTime<Utc>> {
        self.first_used_at
    }

    /// Whether the code is spent at `now`: used, and the reuse window has passed.
    pub fn is_spent(&self, now: DateTime<Utc>) -> bool {
        self.first_used_at
            .is_some_and(|first| now >= first + TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES))
    }

    /// fresh|in use -> in use, when `candidate` is the code and it is not spent; the first use
    /// opens the reuse window.
    pub fn redeem(&self, candidate: &str, now: DateTime<Utc>) -> Result<Self, PairCodeError> {
        let matches = bool::from(candidate.trim().as_bytes().ct_eq(self.code.as_bytes()));
        if !matches || self.is_spent(now) {
            return Err(PairCodeError::Wrong);
        }
        Ok(Self {
            code: self.code.clone(),
            first_used_at: Some(self.first_used_at.unwrap_or(now)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-26T10:00:00Z").unwrap().to_utc() + TimeDelta::minutes(minutes)
    }

    #[test]
    fn a_code_works_for_ten_minutes_from_its_first_use_then_is_spent() {
        let fresh = PairCode::issued("123456".into());
        assert!(!fresh.is_spent(at(600)), "an unused code does not expire");
        assert_eq!(fresh.redeem("654321", at(0)), Err(PairCodeError::Wrong));
        let used = fresh.redeem(" 123456 ", at(0)).unwrap();
        let again = used.redeem("123456", at(9)).unwrap();
        assert_eq!(again, used, "later uses keep the first use's window");
        assert!(used.is_spent(at(PAIR_CODE_REUSE_MINUTES)));
        assert_eq!(
            used.redeem("123456", at(PAIR_CODE_REUSE_MINUTES)),
            Err(PairCodeError::Wrong)
        );
    }
}
