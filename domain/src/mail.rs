//! The retry rule of the mail outbox: how long a failed mail waits before its next attempt, and
//! when delivery gives up.

use chrono::TimeDelta;

/// Attempts a mail gets before delivery gives up on it (the row stays, with its last error).
pub const MAX_ATTEMPTS: u32 = 10;
/// The longest wait between two attempts.
pub const MAX_BACKOFF: TimeDelta = TimeDelta::hours(1);
/// How long a sender holds a mail it is sending; a sender that dies mid-send leaves the mail
/// due again after this.
pub const LEASE: TimeDelta = TimeDelta::minutes(2);

/// The wait after the `attempts`-th failed attempt: `base`, doubling each time, at most
/// [`MAX_BACKOFF`]; `None` once the attempts are spent.
pub fn retry_after(attempts: u32, base: TimeDelta) -> Option<TimeDelta> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let doublings = attempts.saturating_sub(1).min(20);
    let wait = base.checked_mul(1 << doublings).unwrap_or(MAX_BACKOFF);
    Some(wait.min(MAX_BACKOFF))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap_and_stop_after_the_last_attempt() {
        let base = TimeDelta::seconds(30);
        let cases = [
            (1, Some(TimeDelta::seconds(30))),
            (2, Some(TimeDelta::seconds(60))),
            (3, Some(TimeDelta::seconds(120))),
            (8, Some(MAX_BACKOFF)),
            (MAX_ATTEMPTS - 1, Some(MAX_BACKOFF)),
            (MAX_ATTEMPTS, None),
        ];
        for (attempts, expected) in cases {
            assert_eq!(retry_after(attempts, base), expected, "after attempt {attempts}");
        }
    }
}
