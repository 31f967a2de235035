//! When another attempt is worth it, and how long to wait first.

use std::time::Duration;

use super::errors::ProviderError;

/// Bounded retries with exponential backoff that honours the provider's `retry-after` up to a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per model call, the first included (1 = never retry).
    pub max_attempts: u32,
    /// Wait before the second attempt when the provider names none; doubles each time.
    pub base_backoff: Duration,
    /// Longest wait honoured; a provider asking for more fails the call at once.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(20),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based), or
    /// `None` when the call should fail now. Only transient errors of attempts that received no
    /// reply text are retried: nothing the provider produced is thrown away.
    pub fn next_wait(&self, attempt: u32, error: &ProviderError, received_text: bool) -> Option<Duration> {
        if received_text || !error.is_transient() || attempt >= self.max_attempts {
            return None;
        }
        let wait = match error.retry_after {
            Some(asked) => asked,
            None => self.base_backoff.saturating_mul(1 << (attempt - 1).min(16)),
        };
        (wait <= self.max_wait).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::errors::ProviderErrorKind;

    fn error(kind: ProviderErrorKind, retry_after: Option<u64>) -> ProviderError {
        ProviderError {
            retry_after: retry_after.map(Duration::from_secs),
            ..ProviderError::new(kind, "p", "m")
        }
    }

    #[test]
    fn transient_errors_back_off_and_honour_retry_after_up_to_the_cap() {
        let policy = RetryPolicy::default();
        let unavailable = error(ProviderErrorKind::Unavailable, None);
        assert_eq!(
            policy.next_wait(1, &unavailable, false),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            policy.next_wait(2, &unavailable, false),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(policy.next_wait(3, &unavailable, false), None);
        assert_eq!(
            policy.next_wait(1, &error(ProviderErrorKind::RateLimited, Some(3)), false),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            policy.next_wait(1, &error(ProviderErrorKind::RateLimited, Some(60)), false),
            None
        );
    }

    #[test]
    fn permanent_errors_and_partial_replies_are_not_retried() {
        let policy = RetryPolicy::default();
        for kind in [
            ProviderErrorKind::Unauthorized,
            ProviderErrorKind::Rejected,
            ProviderErrorKind::Malformed,
        ] {
            assert_eq!(policy.next_wait(1, &error(kind, None), false), None, "{kind:?}");
        }
        assert_eq!(
            policy.next_wait(1, &error(ProviderErrorKind::Overloaded, None), true),
            None
        );
    }
}
