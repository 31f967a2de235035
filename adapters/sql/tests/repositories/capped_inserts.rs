//! Inserts capped by ending the oldest (hosted `connector_keys_per_account` and
//! `console_sessions_per_account`) on every backend: of writers racing for one account, however
//! many, at most the cap stay live, the ones that went are the oldest, and another account's
//! rows are not counted.

use std::sync::Arc;

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::console_sessions::{ConsoleSessionStore, StoredConsoleSession};
use svc_application::ports::operator::ConnectorKeyRepository;
use svc_domain::connector_key::{ConnectorKey, ConnectorKeyDraft};
use svc_sql::SqlConsoleSessions;
use svc_sql::operator::SeaOrmConnectorKeyRepository;
use tokio::sync::Barrier;

support::backend_tests!(
    racing_key_mints_leave_at_most_the_cap_live,
    racing_console_sign_ins_leave_at_most_the_cap_open
);

const CAP: u64 = 3;
const RACERS: usize = 12;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-23T10:00:00Z").unwrap().to_utc()
}

/// Runs `RACERS` copies of `attempt` released together.
async fn race<F, Fut>(attempt: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let start = Arc::new(Barrier::new(RACERS));
    let tasks: Vec<_> = (0..RACERS)
        .map(|i| {
            let start = start.clone();
            let attempt = attempt(i);
            tokio::spawn(async move {
                start.wait().await;
                attempt.await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

fn key(id: &str, owner: &str, at: DateTime<Utc>, expires_at: Option<DateTime<Utc>>) -> ConnectorKey {
    let draft = ConnectorKeyDraft {
        id: id.into(),
        owner_user_id: owner.into(),
        app_id: None,
        name: None,
        expires_at,
        secret: format!("{id}{}", "s".repeat(40)),
    };
    ConnectorKey::issue(draft, at).unwrap().0
}

async fn racing_key_mints_leave_at_most_the_cap_live(db: DatabaseConnection) {
    let keys = Arc::new(SeaOrmConnectorKeyRepository::new(db));
    // Stored before the race: an expired key (not counted), the oldest live one, and another
    // account's.
    keys.insert(&key("expired", "ada", t0(), Some(t0() + TimeDelta::seconds(1))))
        .await
        .unwrap();
    keys.insert(&key("oldest", "ada", t0(), None)).await.unwrap();
    keys.insert(&key("theirs", "grace", t0(), None)).await.unwrap();
    let minute = t0() + TimeDelta::minutes(1);
    race(|i| {
        let keys = keys.clone();
        let racer = key(&format!("racer{i:02}"), "ada", minute, None);
        async move {
            keys.insert_keeping_newest(&racer, CAP).await.unwrap();
        }
    })
    .await;

    let live = |owner: &'static str| {
        let keys = keys.clone();
        async move {
            let listed = keys.list_by_owner(owner).await.unwrap();
            listed
                .into_iter()
                .filter(|k| k.authenticates(t0() + TimeDelta::hours(1)))
                .map(|k| k.id)
                .collect::<Vec<_>>()
        }
    };
    let ada = live("ada").await;
    assert_eq!(ada.len() as u64, CAP, "{ada:?}");
    assert!(!ada.contains(&"oldest".to_owned()), "the oldest went first: {ada:?}");
    assert_eq!(live("grace").await, ["theirs"], "another account is not counted");

    // A later mint revokes exactly the oldest live one and answers its id.
    let later = key("later", "ada", minute + TimeDelta::minutes(1), None);
    let revoked = keys.insert_keeping_newest(&later, CAP).await.unwrap();
    let mut oldest_live = ada.clone();
    oldest_live.sort();
    assert_eq!(revoked, [oldest_live[0].clone()]);
    assert_eq!(live("ada").await.len() as u64, CAP);
}

fn session(hash: &str, principal: &str, at: DateTime<Utc>) -> StoredConsoleSession {
    StoredConsoleSession {
        token_hash: hash.into(),
        principal_id: principal.into(),
        locked_app: None,
        key_id: None,
        csrf_token: "csrf".into(),
        created_at: at,
        expires_at: at + TimeDelta::hours(12),
    }
}

async fn racing_console_sign_ins_leave_at_most_the_cap_open(db: DatabaseConnection) {
    let sessions = Arc::new(SqlConsoleSessions::new(db));
    sessions.insert(&session("oldest", "ada", t0())).await.unwrap();
    sessions.insert(&session("theirs", "grace", t0())).await.unwrap();
    let minute = t0() + TimeDelta::minutes(1);
    race(|i| {
        let sessions = sessions.clone();
        let racer = session(&format!("racer{i:02}"), "ada", minute);
        async move {
            sessions.insert_keeping_newest(&racer, CAP).await.unwrap();
        }
    })
    .await;

    let mut open = Vec::new();
    for hash in std::iter::once("oldest".to_owned()).chain((0..RACERS).map(|i| format!("racer{i:02}"))) {
        if sessions.find(&hash).await.unwrap().is_some() {
            open.push(hash);
        }
    }
    assert_eq!(open.len() as u64, CAP, "{open:?}");
    assert!(!open.contains(&"oldest".to_owned()), "the oldest went first: {open:?}");
    assert!(
        sessions.find("theirs").await.unwrap().is_some(),
        "another account is not counted"
    );

    let ended = sessions
        .insert_keeping_newest(&session("later", "ada", minute + TimeDelta::minutes(1)), CAP)
        .await
        .unwrap();
    assert_eq!(ended, 1);
    assert!(
        sessions.find(&open[0]).await.unwrap().is_none(),
        "the oldest open one ended"
    );
    assert!(sessions.find("later").await.unwrap().is_some());
}
