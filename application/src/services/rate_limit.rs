//! Fixed-window rate limits in memory: the public-demo generation limit. The same rule counted in
//! the database, shared by replicas (pair-code attempts, OAuth registrations), is the
//! `ports::rate_windows::SharedWindows` port.
//!
//! A key's window opens at its first admitted request and lasts `window`; at most `limit`
//! requests are admitted in it, later ones are refused until it ends, and the next request after
//! that opens a fresh window. Refused requests are not counted. Windows live in memory, so each
//! replica counts on its own; windows that ended are swept once per window length, so memory
//! holds only the keys seen in roughly the last two windows. Time is passed in: the caller owns
//! the clock.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, TimeDelta, Utc};

/// The key of a per-address limit: an IPv4 address, or an IPv6 address's /64 (every IPv6 client
/// holds at least a /64 and could otherwise take a fresh window per request). An IPv4 client of
/// a dual-stack listener arrives as `::ffff:a.b.c.d` and counts as its IPv4 address: as a /64
/// every IPv4 client would share the one key `::`.
pub fn address_key(address: std::net::IpAddr) -> std::net::IpAddr {
    match address.to_canonical() {
        std::net::IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            std::net::IpAddr::V6(std::net::Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}

/// At most `limit` requests per key in each `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowQuota {
    pub limit: u32,
    pub window: TimeDelta,
}

impl WindowQuota {
    pub fn new(limit: u32, window: TimeDelta) -> Self {
        Self { limit, window }
    }
}

/// The key's window is spent; it ends after `retry_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowFull {
    pub retry_after: TimeDelta,
}

impl WindowFull {
    /// Whole seconds until the window ends, rounded up and at least 1 (a `Retry-After` value).
    pub fn retry_after_seconds(&self) -> u64 {
        let millis = u64::try_from(self.retry_after.num_milliseconds()).unwrap_or(0);
        millis.div_ceil(1000).max(1)
    }
}

pub struct FixedWindowLimiter<K> {
    quota: WindowQuota,
    state: Mutex<Windows<K>>,
}

struct Windows<K> {
    open: HashMap<K, Window>,
    next_sweep: Option<DateTime<Utc>>,
}

struct Window {
    opened_at: DateTime<Utc>,
    admitted: u32,
}

impl<K: Hash + Eq> FixedWindowLimiter<K> {
    pub fn new(quota: WindowQuota) -> Self {
        Self {
            quota,
            state: Mutex::new(Windows {
                open: HashMap::new(),
                next_sweep: None,
            }),
        }
    }

    pub fn quota(&self) -> WindowQuota {
        self.quota
    }

    /// Counts one request of `key` at `now`, or says when its window ends.
    pub fn admit(&self, key: K, now: DateTime<Utc>) -> Result<(), WindowFull> {
        let WindowQuota { limit, window } = self.quota;
        if limit == 0 {
            return Err(WindowFull { retry_after: window });
        }
        let mut state = lock(&self.state);
        state.sweep(now, window);
        match state.open.entry(key) {
            Entry::Occupied(mut entry) if now < entry.get().opened_at + window => {
                let current = entry.get_mut();
                if current.admitted >= limit {
                    return Err(WindowFull {
                        retry_after: current.opened_at + window - now,
                    });
                }
                current.admitted += 1;
            }
            Entry::Occupied(mut entry) => {
                entry.insert(Window::opened(now));
            }
            Entry::Vacant(entry) => {
                entry.insert(Window::opened(now));
            }
        }
        Ok(())
    }

    /// Takes back one request of `key` admitted at `admitted_at` that turned out not to happen
    /// (the work it was admitted for was refused elsewhere). Only the window it was counted in is
    /// touched: after that window ended there is nothing to give back.
    pub fn give_back(&self, key: &K, admitted_at: DateTime<Utc>) {
        let mut state = lock(&self.state);
        if let Some(current) = state.open.get_mut(key)
            && current.opened_at <= admitted_at
            && admitted_at < current.opened_at + self.quota.window
        {
            current.admitted = current.admitted.saturating_sub(1);
        }
    }

    /// Keys with a window open at `now` (for tests and metrics).
    pub fn tracked(&self) -> usize {
        lock(&self.state).open.len()
    }
}

impl Window {
    fn opened(now: DateTime<Utc>) -> Self {
        Self {
            opened_at: now,
            admitted: 1,
        }
    }
}

impl<K> Windows<K> {
    fn sweep(&mut self, now: DateTime<Utc>, window: TimeDelta) {
        if self.next_sweep.is_some_and(|at| now < at) {
            return;
        }
        self.open.retain(|_, w| now < w.opened_at + window);
        self.next_sweep = Some(now + window);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
    }

    #[test]
    fn an_ipv6_client_is_its_slash_64() {
        let a: std::net::IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: std::net::IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let other: std::net::IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(other));
        let v4: std::net::IpAddr = "203.0.113.9".parse().unwrap();
        assert_eq!(address_key(v4), v4);
    }

    #[test]
    fn an_ipv4_client_of_a_dual_stack_listener_is_its_own_ipv4_address() {
        let mapped: std::net::IpAddr = "::ffff:203.0.113.9".parse().unwrap();
        let neighbour: std::net::IpAddr = "::ffff:198.51.100.1".parse().unwrap();
        assert_eq!(address_key(mapped), "203.0.113.9".parse::<std::net::IpAddr>().unwrap());
        assert_ne!(address_key(mapped), address_key(neighbour));
    }

    #[test]
    fn a_request_given_back_frees_its_place_in_its_own_window_only() {
        let limiter = FixedWindowLimiter::new(WindowQuota::new(2, TimeDelta::seconds(60)));
        let t0 = start();
        limiter.admit("a", t0).unwrap();
        limiter.admit("a", t0).unwrap();
        assert!(limiter.admit("a", t0).is_err());
        limiter.give_back(&"a", t0);
        limiter.admit("a", t0 + TimeDelta::seconds(1)).unwrap();
        assert!(limiter.admit("a", t0 + TimeDelta::seconds(2)).is_err());
        // A request of an ended window gives nothing back to the next one.
        let t1 = t0 + TimeDelta::seconds(61);
        limiter.admit("a", t1).unwrap();
        limiter.admit("a", t1).unwrap();
        limiter.give_back(&"a", t0);
        assert!(limiter.admit("a", t1).is_err());
    }

    fn ten_per_ten_minutes() -> FixedWindowLimiter<&'static str> {
        FixedWindowLimiter::new(WindowQuota::new(10, TimeDelta::minutes(10)))
    }

    #[test]
    fn the_eleventh_in_a_window_is_refused_until_the_window_ends() {
        let limiter = ten_per_ten_minutes();
        let t0 = start();
        for n in 0..10 {
            assert_eq!(
                limiter.admit("a", t0 + TimeDelta::seconds(n)),
                Ok(()),
                "request {}",
                n + 1
            );
        }
        let refused = limiter.admit("a", t0 + TimeDelta::seconds(10)).unwrap_err();
        assert_eq!(refused.retry_after_seconds(), 590);
        // A token bucket would have refilled one by now; a fixed window has not.
        let later = limiter.admit("a", t0 + TimeDelta::seconds(60)).unwrap_err();
        assert_eq!(later.retry_after_seconds(), 540);
        assert!(limiter.admit("a", t0 + TimeDelta::seconds(599)).is_err());
        assert_eq!(limiter.admit("a", t0 + TimeDelta::seconds(600)), Ok(()));
    }

    #[test]
    fn a_fresh_window_opens_at_the_first_request_after_the_last_one_ended() {
        let limiter = ten_per_ten_minutes();
        let t0 = start();
        for _ in 0..10 {
            limiter.admit("a", t0).unwrap();
        }
        let reopened = t0 + TimeDelta::minutes(25);
        for _ in 0..10 {
            limiter.admit("a", reopened).unwrap();
        }
        let refused = limiter.admit("a", reopened + TimeDelta::minutes(9)).unwrap_err();
        assert_eq!(refused.retry_after_seconds(), 60);
    }

    #[test]
    fn refused_requests_are_not_counted_and_keys_are_independent() {
        let limiter = FixedWindowLimiter::new(WindowQuota::new(1, TimeDelta::seconds(2)));
        let t0 = start();
        limiter.admit("a", t0).unwrap();
        for _ in 0..5 {
            assert!(limiter.admit("a", t0 + TimeDelta::milliseconds(500)).is_err());
        }
        assert_eq!(limiter.admit("b", t0), Ok(()));
        assert_eq!(limiter.admit("a", t0 + TimeDelta::seconds(2)), Ok(()));
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let limiter = FixedWindowLimiter::new(WindowQuota::new(1, TimeDelta::seconds(2)));
        let t0 = start();
        limiter.admit("a", t0).unwrap();
        let refused = limiter.admit("a", t0 + TimeDelta::milliseconds(1999)).unwrap_err();
        assert_eq!(refused.retry_after, TimeDelta::milliseconds(1));
        assert_eq!(refused.retry_after_seconds(), 1);
        let refused = limiter.admit("a", t0 + TimeDelta::milliseconds(500)).unwrap_err();
        assert_eq!(refused.retry_after_seconds(), 2);
    }

    #[test]
    fn ended_windows_are_forgotten() {
        let limiter = ten_per_ten_minutes();
        let t0 = start();
        for key in ["a", "b", "c"] {
            limiter.admit(key, t0).unwrap();
        }
        assert_eq!(limiter.tracked(), 3);
        limiter.admit("d", t0 + TimeDelta::minutes(11)).unwrap();
        assert_eq!(limiter.tracked(), 1);
    }

    #[test]
    fn a_zero_limit_refuses_everything() {
        let limiter = FixedWindowLimiter::new(WindowQuota::new(0, TimeDelta::seconds(30)));
        assert_eq!(limiter.admit("a", start()).unwrap_err().retry_after_seconds(), 30);
    }
}
