//! `sessions.expires_at`: the indexed expiry the retention sweep walks (`retention.rs`), written
//! with every write of a session's head (`sessions.rs`).
//!
//! It is the first multiple of ten seconds after the session's expiry, so the index changes once
//! in ten seconds however often heartbeats move `last_activity_at` (each at most once a second): an
//! UPDATE that leaves every indexed value as it was is a PostgreSQL heap-only update and leaves
//! InnoDB's secondary indexes alone. It is capped at the last minute every backend stores
//! (MariaDB's DATETIME ends in 9999; a five-digit year in SQLite's text would sort before it): a
//! session expiring later (hosted renders live a century, some forever) never reaches it.
//!
//! It is stored without a zone (UTC): MySQL binds a zoned instant as a TIMESTAMP, which ends in
//! 2038 (a later one is stored as NULL), while a DATETIME reaches 9999.
//!
//! The stored value is after the session's expiry by at most ten seconds. A row stored before
//! migration `m20261222_000001_session_expires_at` holds the column's default (the epoch), and
//! one an older server inserted or updated beside a newer one holds the epoch or an expiry it has
//! since outlived: earlier than its expiry either way. The sweep checks every session it finds
//! against the expiry rule, so such a row is only looked at early, and the sweep stores the
//! expiry a write would on each one it keeps (`retention.rs`), so it is looked at once.

use chrono::{DateTime, NaiveDateTime, Utc};
use svc_domain::session::SessionHead;

/// 9999-12-31T23:59:00Z, a multiple of [`RESOLUTION_SECONDS`].
const LAST_STORED_MINUTE: i64 = 253_402_300_740;

/// How far apart the stored expiries are.
const RESOLUTION_SECONDS: i64 = 10;

/// [`LAST_STORED_MINUTE`] as stored.
pub(crate) fn last_stored_minute() -> NaiveDateTime {
    DateTime::from_timestamp(LAST_STORED_MINUTE, 0)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
        .naive_utc()
}

/// The `expires_at` a session with this head is stored with (UTC).
pub(crate) fn indexed_expiry(head: &SessionHead) -> NaiveDateTime {
    indexed(head.expires_at())
}

/// The `expires_at` stored for a session expiring at `expiry` (UTC).
pub(crate) fn indexed(expiry: DateTime<Utc>) -> NaiveDateTime {
    let expiry = expiry.timestamp();
    let next = expiry
        .div_euclid(RESOLUTION_SECONDS)
        .saturating_mul(RESOLUTION_SECONDS)
        .saturating_add(RESOLUTION_SECONDS);
    match DateTime::from_timestamp(next, 0) {
        Some(at) if next < LAST_STORED_MINUTE => at.naive_utc(),
        _ => last_stored_minute(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn head(last_activity_at: DateTime<Utc>, ttl_seconds: u64) -> SessionHead {
        SessionHead::rendered(json!({}), ttl_seconds, last_activity_at)
    }

    fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
        naive.and_utc()
    }

    fn at(h: u32, m: u32, s: u32, milli: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 22, h, m, s).unwrap() + chrono::Duration::milliseconds(milli.into())
    }

    #[test]
    fn the_first_multiple_of_ten_seconds_after_the_expiry() {
        assert_eq!(utc(indexed_expiry(&head(at(10, 0, 0, 0), 60))), at(10, 1, 10, 0));
        assert_eq!(utc(indexed_expiry(&head(at(10, 0, 59, 999), 60))), at(10, 2, 0, 0));
        assert_eq!(utc(indexed_expiry(&head(at(10, 0, 30, 500), 3600))), at(11, 0, 40, 0));
    }

    #[test]
    fn heartbeats_within_ten_seconds_leave_it_unchanged() {
        let first = indexed_expiry(&head(at(10, 0, 0, 0), 3600));
        for second in 0..10 {
            assert_eq!(indexed_expiry(&head(at(10, 0, second, 250), 3600)), first);
        }
        assert_ne!(indexed_expiry(&head(at(10, 0, 10, 0), 3600)), first);
    }

    #[test]
    fn a_lifetime_past_year_9999_stops_at_its_last_minute() {
        let last = DateTime::from_timestamp(LAST_STORED_MINUTE, 0).unwrap();
        assert_eq!(last, Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 0).unwrap());
        for ttl in [u64::MAX, i64::MAX as u64, 400 * 365 * 86_400 * 1000] {
            assert_eq!(utc(indexed_expiry(&head(at(10, 0, 0, 0), ttl))), last, "{ttl}");
        }
    }
}
