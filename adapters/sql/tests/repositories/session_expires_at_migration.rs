//! Migration `m20261222_000001_session_expires_at` on every backend, and the rows it leaves at
//! the column's default (the epoch): sessions stored before it, and those an older server writes
//! beside a newer one. The migration does not rewrite them (one UPDATE of every row would hold the
//! table while older replicas wait); the retention sweep finds them, deletes those past their
//! grace, and stores on each one it keeps the indexed expiry a write stores now (the first
//! multiple of ten seconds after its expiry, at most the last minute of 9999), so the next sweep
//! does not read it again. However many live ones there are, the expired ones behind them go.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::sea_query::{Alias, Expr, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use sea_orm_migration::MigratorTrait;
use svc_application::ports::agent::SessionRepository;
use svc_application::ports::retention::RetentionRepository;
use svc_application::services::retention::{RetentionPolicy, RetentionService};
use svc_application::testing::ManualClock;
use svc_sql::Migrator;
use svc_sql::agent::{SeaOrmRetentionRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(
    sessions_stored_before_it_are_indexed_by_the_sweep,
    many_live_sessions_of_an_older_server_neither_go_nor_hold_back_the_expired,
    indexing_anew_never_moves_back_what_a_write_stored_since,
);

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

fn now() -> DateTime<Utc> {
    utc(2026, 12, 22, 12, 0, 0)
}

/// Writes a session row as a server before the migration did: every column but `expires_at`.
async fn store_without_expiry(db: &DatabaseConnection, id: &str, last_activity_at: DateTime<Utc>, ttl_seconds: i64) {
    let columns = [
        "session_id",
        "app_id",
        "intent",
        "contract",
        "status",
        "epoch",
        "props",
        "last_activity_at",
        "ttl_seconds",
        "context_snapshot",
        "event_sequence",
        "created_at",
        "revision",
    ];
    let insert = Query::insert()
        .into_table(Alias::new("sessions"))
        .columns(columns.map(Alias::new))
        .values_panic([
            Expr::val(id),
            Expr::val("app_1"),
            Expr::val("card"),
            Expr::val("{}"),
            Expr::val("active"),
            Expr::val(1_i64),
            Expr::val(r#"{"title":"first"}"#),
            Expr::val(last_activity_at),
            Expr::val(ttl_seconds),
            Expr::val("{}"),
            Expr::val(0_i64),
            Expr::val(last_activity_at - Duration::hours(1)),
            Expr::val(0_i64),
        ])
        .to_owned();
    db.execute(&insert).await.unwrap();
}

/// A sweep at `now` keeping expired sessions seven days, two rows a statement.
fn sweep_at(db: &DatabaseConnection, now: DateTime<Utc>) -> RetentionService {
    let policy = RetentionPolicy {
        expired_grace: Duration::days(7),
        replay_buffer: 1000,
        batch_rows: 2,
    };
    let store = SeaOrmRetentionRepository::new(db.clone());
    RetentionService::new(Arc::new(store), Arc::new(ManualClock::at(now)), policy)
}

/// The indexed expiry of every session the walk finds by `expired_by`.
async fn walked(db: &DatabaseConnection, expired_by: DateTime<Utc>) -> Vec<(String, DateTime<Utc>)> {
    let store = SeaOrmRetentionRepository::new(db.clone());
    let mut found = Vec::new();
    let mut after = None;
    loop {
        let page = store.expired_sessions(expired_by, after.as_ref(), 100).await.unwrap();
        found.extend(page.iter().map(|s| (s.session_id.clone(), s.indexed_expiry)));
        if page.len() < 100 {
            return found;
        }
        after = page.last().cloned();
    }
}

fn epoch() -> DateTime<Utc> {
    DateTime::UNIX_EPOCH
}

async fn sessions_stored_before_it_are_indexed_by_the_sweep(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261222_000001_session_expires_at").await;
    let century = 3_155_760_000;
    let before = [
        // (id, last activity, ttl, the indexed expiry a write stores)
        (
            "expired_past_grace",
            utc(2026, 11, 1, 10, 0, 30) + Duration::milliseconds(250),
            3600,
            utc(2026, 11, 1, 11, 0, 40),
        ),
        (
            "expired_within_grace",
            utc(2026, 12, 20, 8, 15, 0),
            60,
            utc(2026, 12, 20, 8, 16, 10),
        ),
        (
            "alive",
            utc(2026, 12, 22, 11, 59, 59) + Duration::milliseconds(999),
            86_400,
            utc(2026, 12, 23, 12, 0, 0),
        ),
        (
            "hosted_century",
            utc(2026, 12, 22, 0, 0, 0),
            century,
            utc(2126, 12, 23, 0, 0, 10),
        ),
        (
            "never_expires",
            utc(2026, 12, 22, 0, 0, 0),
            i64::MAX,
            utc(9999, 12, 31, 23, 59, 0),
        ),
    ];
    for (id, last_activity_at, ttl, _) in before {
        store_without_expiry(&db, id, last_activity_at, ttl).await;
    }

    Migrator::up(&db, None).await.unwrap();

    let ids = |of: &[(&str, DateTime<Utc>, i64, DateTime<Utc>)]| of.iter().map(|b| b.0.to_owned()).collect::<Vec<_>>();
    let at_the_epoch: Vec<(String, DateTime<Utc>)> = ids(&before).into_iter().map(|id| (id, epoch())).collect();
    let mut found = walked(&db, DateTime::<Utc>::MAX_UTC).await;
    found.sort();
    let mut expected = at_the_epoch.clone();
    expected.sort();
    assert_eq!(found, expected, "the migration leaves them at the column's default");

    let sessions = SeaOrmSessionRepository::new(db.clone());
    // The same heads written now, through the repository.
    for (id, last_activity_at, ttl, _) in before {
        let mut record = support::session(&format!("{id}_written_now"));
        record.head.last_activity_at = last_activity_at;
        record.head.ttl_seconds = u64::try_from(ttl).unwrap();
        sessions.insert(&record).await.unwrap();
    }
    // A server of before the migration, running beside this one, writes without the column.
    store_without_expiry(&db, "older_server", now() - Duration::hours(1), 86_400).await;

    let sweep = sweep_at(&db, now()).sweep().await.unwrap();
    assert_eq!(sweep.sessions_deleted, 2);
    assert_eq!(
        sweep.sessions_reindexed, 5,
        "the four kept of before, and the older server's"
    );
    for gone in ["expired_past_grace", "expired_past_grace_written_now"] {
        assert!(sessions.get(gone).await.unwrap().is_none(), "{gone} is deleted");
    }
    for (id, _, _, _) in &before[1..] {
        assert!(sessions.get(id).await.unwrap().is_some(), "{id} is kept");
    }
    assert!(sessions.get("older_server").await.unwrap().is_some(), "alive, kept");

    let indexed = walked(&db, DateTime::<Utc>::MAX_UTC).await;
    let indexed_expiry = |id: &str| {
        indexed
            .iter()
            .find(|(found, _)| found == id)
            .unwrap_or_else(|| panic!("{id} is found by the walk"))
            .1
    };
    for (id, _, _, expected) in &before[1..] {
        assert_eq!(
            indexed_expiry(id),
            *expected,
            "{id}: the sweep stores what a write stores"
        );
        assert_eq!(
            indexed_expiry(&format!("{id}_written_now")),
            *expected,
            "{id} written now"
        );
    }
    assert_eq!(indexed_expiry("older_server"), utc(2026, 12, 23, 11, 0, 10));
    let again = sweep_at(&db, now() + Duration::minutes(5)).sweep().await.unwrap();
    assert_eq!(
        (again.sessions_deleted, again.sessions_reindexed),
        (0, 0),
        "nothing twice"
    );
}

async fn many_live_sessions_of_an_older_server_neither_go_nor_hold_back_the_expired(db: DatabaseConnection) {
    let sessions = SeaOrmSessionRepository::new(db.clone());
    // Live sessions at the column's default, found before everything else, pages of them.
    let live = 120;
    for n in 0..live {
        let id = format!("older_server_{n:03}");
        store_without_expiry(&db, &id, now() - Duration::minutes(n), 86_400).await;
    }
    // Expired past the grace: one indexed behind them, one an older server wrote too.
    let mut expired = support::session("expired_past_grace");
    expired.head.last_activity_at = now() - Duration::days(9);
    expired.head.ttl_seconds = 86_400;
    sessions.insert(&expired).await.unwrap();
    store_without_expiry(&db, "older_server_expired", now() - Duration::days(9), 86_400).await;

    let sweep = sweep_at(&db, now()).sweep().await.unwrap();
    assert_eq!(sweep.sessions_deleted, 2, "both past their grace go");
    assert_eq!(sweep.sessions_reindexed, u64::try_from(live).unwrap());
    assert!(sessions.get("expired_past_grace").await.unwrap().is_none());
    assert!(sessions.get("older_server_expired").await.unwrap().is_none());
    assert_eq!(
        support::count_rows(&db, "sessions").await,
        live,
        "every live one is kept"
    );

    // Each is indexed by its expiry now: a sweep past the grace of a new one reads that one alone.
    let cutoff = now() + Duration::minutes(5) - Duration::days(7);
    assert_eq!(walked(&db, cutoff).await, [], "the walk no longer finds the live ones");
    let mut later = support::session("expired_later");
    later.head.last_activity_at = now() - Duration::days(8);
    later.head.ttl_seconds = 86_400;
    sessions.insert(&later).await.unwrap();
    let again = sweep_at(&db, now() + Duration::minutes(5)).sweep().await.unwrap();
    assert_eq!((again.sessions_deleted, again.sessions_reindexed), (1, 0));
    assert_eq!(support::count_rows(&db, "sessions").await, live);
    let oldest = sessions.get("older_server_119").await.unwrap().expect("kept");
    assert_eq!(oldest.head.ttl_seconds, 86_400);
}

async fn indexing_anew_never_moves_back_what_a_write_stored_since(db: DatabaseConnection) {
    store_without_expiry(&db, "older_server", now() - Duration::hours(2), 3600).await;
    let store = SeaOrmRetentionRepository::new(db.clone());
    let read = store.expired_sessions(now(), None, 10).await.unwrap();
    assert_eq!(read.len(), 1, "found at the epoch");

    // A heartbeat through this server, after the sweep read the row and before it writes.
    let sessions = SeaOrmSessionRepository::new(db.clone());
    let current = sessions.get("older_server").await.unwrap().expect("stored");
    let mut head = current.head.clone();
    head.last_activity_at = now();
    assert!(
        sessions
            .save_head("older_server", current.revision, &head, None)
            .await
            .unwrap()
    );
    assert_eq!(store.reindex_sessions(&read).await.unwrap(), 0);
    let indexed = walked(&db, DateTime::<Utc>::MAX_UTC).await;
    assert_eq!(
        indexed,
        [("older_server".to_owned(), utc(2026, 12, 22, 13, 0, 10))],
        "the heartbeat's expiry stays"
    );

    // Without a write since, the row read is indexed by what it holds.
    store_without_expiry(&db, "older_server_idle", now() - Duration::hours(2), 7200).await;
    let read = store.expired_sessions(now(), None, 10).await.unwrap();
    assert_eq!(store.reindex_sessions(&read).await.unwrap(), 1);
    assert_eq!(
        store.reindex_sessions(&read).await.unwrap(),
        0,
        "a racing replica changes nothing"
    );
}
