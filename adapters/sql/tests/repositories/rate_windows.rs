//! The shared fixed windows on both backends: a window opens at the first request, admits
//! `limit`, refuses the rest (uncounted) until it ends; keys and quotas are independent; racing
//! requests never admit more than `limit`; a request given back frees its place only in the
//! window it was counted in.

use crate::support;

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::rate_windows::SharedWindows;
use svc_sql::SqlSharedWindows;

support::backend_tests!(
    a_window_admits_its_limit_then_waits_for_its_end,
    racing_requests_admit_the_limit_only,
    a_request_given_back_frees_its_place_in_its_own_window_only
);

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-26T10:00:00Z").unwrap().to_utc() + TimeDelta::seconds(seconds)
}

async fn a_window_admits_its_limit_then_waits_for_its_end(db: DatabaseConnection) {
    let windows = SqlSharedWindows::new(db);
    let minute = TimeDelta::minutes(1);
    let admit = |key: &'static str, quota: &'static str, now| {
        let windows = &windows;
        async move { windows.admit(quota, key, 2, minute, now).await.unwrap() }
    };
    assert_eq!(admit("a", "q", at(0)).await, None);
    assert_eq!(admit("a", "q", at(10)).await, None);
    assert_eq!(admit("a", "q", at(20)).await, Some(TimeDelta::seconds(40)));
    assert_eq!(
        admit("a", "q", at(50)).await,
        Some(TimeDelta::seconds(10)),
        "refusals are not counted"
    );
    assert_eq!(admit("b", "q", at(50)).await, None, "another key has its own window");
    assert_eq!(admit("a", "other", at(50)).await, None, "another quota too");
    assert_eq!(
        admit("a", "q", at(60)).await,
        None,
        "a fresh window when the old one ends"
    );
    assert_eq!(admit("a", "q", at(61)).await, None);
    assert_eq!(admit("a", "q", at(62)).await, Some(TimeDelta::seconds(58)));
}

async fn racing_requests_admit_the_limit_only(db: DatabaseConnection) {
    let windows = Arc::new(SqlSharedWindows::new(db));
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let windows = windows.clone();
            tokio::spawn(async move { windows.admit("q", "k", 5, TimeDelta::minutes(1), at(0)).await.unwrap() })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        if task.await.unwrap().is_none() {
            admitted += 1;
        }
    }
    assert_eq!(admitted, 5);
}

async fn a_request_given_back_frees_its_place_in_its_own_window_only(db: DatabaseConnection) {
    let windows = SqlSharedWindows::new(db);
    let minute = TimeDelta::minutes(1);
    assert_eq!(windows.admit("q", "a", 2, minute, at(0)).await.unwrap(), None);
    assert_eq!(windows.admit("q", "a", 2, minute, at(10)).await.unwrap(), None);
    assert!(windows.admit("q", "a", 2, minute, at(20)).await.unwrap().is_some());
    windows.give_back("q", "a", minute, at(10)).await.unwrap();
    assert_eq!(
        windows.admit("q", "a", 2, minute, at(30)).await.unwrap(),
        None,
        "the place given back is taken again"
    );
    windows.give_back("q", "b", minute, at(10)).await.unwrap();
    windows.give_back("other", "a", minute, at(10)).await.unwrap();
    assert!(
        windows.admit("q", "a", 2, minute, at(40)).await.unwrap().is_some(),
        "another key's or quota's give-back frees nothing here"
    );
    // A new window opened at 60: a request of the old one given back leaves it alone.
    assert_eq!(windows.admit("q", "a", 2, minute, at(60)).await.unwrap(), None);
    assert_eq!(windows.admit("q", "a", 2, minute, at(61)).await.unwrap(), None);
    windows.give_back("q", "a", minute, at(30)).await.unwrap();
    assert!(windows.admit("q", "a", 2, minute, at(62)).await.unwrap().is_some());
}
