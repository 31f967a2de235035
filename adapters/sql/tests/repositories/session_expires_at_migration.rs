//! Migration `m20261222_000001_session_expires_at` on every backend: sessions stored before it
//! get the indexed expiry a write stores now (the first multiple of ten seconds after their
//! expiry, at most the last minute of 9999), so the retention sweep finds them; a row an older server writes
//! after it (without the column) is found too, and kept while it lives.

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

support::backend_tests!(sessions_stored_before_it_are_indexed_by_their_expiry);

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

async fn sessions_stored_before_it_are_indexed_by_their_expiry(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261222_000001_session_expires_at").await;
    let century = 3_155_760_000;
    let before = [
        // (id, last activity, ttl, the indexed expiry expected)
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

    let sessions = SeaOrmSessionRepository::new(db.clone());
    let store = SeaOrmRetentionRepository::new(db.clone());
    // The same heads written now, through the repository.
    for (id, last_activity_at, ttl, _) in before {
        let mut record = support::session(&format!("{id}_written_now"));
        record.head.last_activity_at = last_activity_at;
        record.head.ttl_seconds = u64::try_from(ttl).unwrap();
        sessions.insert(&record).await.unwrap();
    }
    let indexed = store
        .expired_sessions(DateTime::<Utc>::MAX_UTC, None, 100)
        .await
        .unwrap();
    let indexed_expiry = |id: &str| {
        indexed
            .iter()
            .find(|s| s.session_id == id)
            .unwrap_or_else(|| panic!("{id} is found by the walk"))
            .indexed_expiry
    };
    for (id, _, _, expected) in before {
        assert_eq!(indexed_expiry(id), expected, "{id}");
        assert_eq!(
            indexed_expiry(&format!("{id}_written_now")),
            expected,
            "{id}: the backfill stores what a write stores"
        );
    }

    // A server of before the migration, running beside this one, writes without the column.
    store_without_expiry(&db, "older_server", now() - Duration::hours(1), 86_400).await;
    let policy = RetentionPolicy {
        expired_grace: Duration::days(7),
        replay_buffer: 1000,
        batch_rows: 2,
    };
    let sweep = RetentionService::new(Arc::new(store), Arc::new(ManualClock::at(now())), policy);
    assert_eq!(sweep.sweep().await.unwrap().sessions_deleted, 2);
    for gone in ["expired_past_grace", "expired_past_grace_written_now"] {
        assert!(sessions.get(gone).await.unwrap().is_none(), "{gone} is deleted");
    }
    for (id, _, _, _) in &before[1..] {
        assert!(sessions.get(id).await.unwrap().is_some(), "{id} is kept");
    }
    assert!(sessions.get("older_server").await.unwrap().is_some(), "alive, kept");
}
