//! The retention sweep (`RetentionService` over `SeaOrmRetentionRepository`): a session past its
//! grace goes with everything stored under it, one within it stays whole; the sweep finds them by
//! the expiry each write of a session stores; a session's deliveries and drained gestures are
//! trimmed to what a replay serves, every undrained gesture kept.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::json;
use svc_application::ports::Clock;
use svc_application::ports::agent::{
    DrainBound, EventRepository, NewActionEvent, RenderFailure, SessionRecord, SessionRepository,
};
use svc_application::ports::retention::RetentionRepository;
use svc_application::services::retention::{RetentionPolicy, RetentionService};
use svc_application::testing::ManualClock;
use svc_domain::session::{FrozenCard, SessionStatus};
use svc_sql::ReadCache;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmRetentionRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(
    a_session_past_its_grace_goes_with_everything_stored_under_it,
    the_walk_finds_the_sessions_expired_by_its_cutoff_as_last_written,
    trimming_keeps_what_a_replay_serves_and_every_undrained_gesture,
    trimming_keeps_the_newest_deliveries_that_fit_in_a_replays_bytes,
    racing_sweeps_delete_each_row_once,
);

const KEPT_TABLES: [&str; 4] = ["sessions", "session_history", "action_events", "stream_envelopes"];

/// The rows of `table` stored under `session_id`.
async fn rows_of(db: &DatabaseConnection, table: &str, session_id: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE session_id = '{session_id}'");
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

async fn keys_of(db: &DatabaseConnection, table: &str, key: &str, session_id: &str) -> Vec<i64> {
    let sql = format!("SELECT {key} AS k FROM {table} WHERE session_id = '{session_id}' ORDER BY {key}");
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<i64>("", "k").unwrap())
        .collect()
}

/// The repositories over one read cache (as one server keeps them), and a sweep at `now`.
struct World {
    sessions: SeaOrmSessionRepository,
    events: SeaOrmEventRepository,
    clock: Arc<ManualClock>,
    sweep: RetentionService,
}

fn world(db: &DatabaseConnection, replay_buffer: u64) -> World {
    let cache = Some(ReadCache::new());
    let clock = Arc::new(ManualClock::at(Utc::now()));
    let store = SeaOrmRetentionRepository::new(db.clone()).with_read_cache(cache.clone());
    let policy = RetentionPolicy {
        expired_grace: Duration::days(7),
        replay_buffer,
        // Small, so every delete loop takes several statements.
        batch_rows: 2,
    };
    World {
        sessions: SeaOrmSessionRepository::new(db.clone()).with_read_cache(cache.clone()),
        events: SeaOrmEventRepository::new(db.clone()).with_read_cache(cache),
        sweep: RetentionService::new(Arc::new(store), clock.clone(), policy),
        clock,
    }
}

fn gesture(session_id: &str, n: usize) -> NewActionEvent {
    NewActionEvent {
        session_id: session_id.into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: json!({ "n": n }),
        ui_context: json!({ "tab": "lines" }),
        fired_at: Utc::now(),
    }
}

async fn deliver(events: &SeaOrmEventRepository, session_id: &str, payload: serde_json::Value) -> i64 {
    events
        .append_stream(session_id, "log", "append", &payload, false, Utc::now())
        .await
        .unwrap()
        .seq
}

fn drain(gestures: u64) -> DrainBound {
    DrainBound {
        gestures,
        bytes: usize::MAX,
    }
}

/// A session last active at `last_activity_at` for a day, with three frozen cards, five gestures
/// (two drained) and four deliveries.
async fn stored_session(w: &World, id: &str, last_activity_at: DateTime<Utc>, failed: bool) -> SessionRecord {
    let mut record = support::session(id);
    record.created_at = last_activity_at - Duration::hours(1);
    record.head.last_activity_at = last_activity_at;
    record.head.ttl_seconds = 86_400;
    if failed {
        record.head.status = SessionStatus::Failed;
        record.failure = Some(RenderFailure {
            code: "PRODUCTION_FAILED".into(),
            message: "the model gave up".into(),
        });
    }
    w.sessions.insert(&record).await.unwrap();
    let mut head = record.head.clone();
    for revision in 0..3 {
        let frozen = FrozenCard {
            epoch: head.epoch,
            props: head.props.clone(),
        };
        head.epoch += 1;
        assert!(w.sessions.save_head(id, revision, &head, Some(&frozen)).await.unwrap());
    }
    for n in 1..=5 {
        w.events.append_action(&gesture(id, n)).await.unwrap();
    }
    assert_eq!(w.events.drain(id, Utc::now(), drain(2)).await.unwrap().len(), 2);
    for n in 1..=4 {
        deliver(&w.events, id, json!(format!("line {n}"))).await;
    }
    record
}

async fn stored_rows(db: &DatabaseConnection, id: &str) -> Vec<i64> {
    let mut rows = Vec::new();
    for table in KEPT_TABLES {
        rows.push(rows_of(db, table, id).await);
    }
    rows
}

async fn a_session_past_its_grace_goes_with_everything_stored_under_it(db: DatabaseConnection) {
    let w = world(&db, 1000);
    let now = w.clock.now();
    // Expired nine days ago, two days ago, not yet; and a failed render's, expired nine days ago.
    stored_session(&w, "past_grace", now - Duration::days(10), false).await;
    stored_session(&w, "within_grace", now - Duration::days(3), false).await;
    stored_session(&w, "active", now - Duration::hours(1), false).await;
    stored_session(&w, "failed_past_grace", now - Duration::days(10), true).await;
    let whole = vec![1, 3, 5, 4];
    assert_eq!(stored_rows(&db, "past_grace").await, whole);
    // Kept in memory too (a server's read cache): the sweep makes it forget.
    assert!(w.sessions.get("past_grace").await.unwrap().is_some());

    let sweep = w.sweep.sweep().await.unwrap();
    assert_eq!(sweep.sessions_deleted, 2, "{sweep:?}");
    for gone in ["past_grace", "failed_past_grace"] {
        assert_eq!(stored_rows(&db, gone).await, [0, 0, 0, 0], "{gone}: every row under it");
        assert!(
            w.sessions.get(gone).await.unwrap().is_none(),
            "{gone} answers as missing"
        );
        assert!(w.sessions.get_with_undrained(gone).await.unwrap().is_none());
    }
    for kept in ["within_grace", "active"] {
        assert_eq!(stored_rows(&db, kept).await, whole, "{kept} stays whole");
    }
    let within = w.sessions.get("within_grace").await.unwrap().unwrap();
    assert_eq!(
        within.head.status_at(now),
        SessionStatus::Expired,
        "still answers as expired"
    );
    assert_eq!(
        w.events.drain("within_grace", now, drain(100)).await.unwrap().len(),
        3,
        "its undrained gestures are still drained"
    );

    // Once its grace has passed too, it goes; the active one (active again) stays.
    w.clock.advance(Duration::days(6));
    let mut active = w.sessions.get("active").await.unwrap().unwrap();
    active.head.last_activity_at = w.clock.now();
    assert!(
        w.sessions
            .save_head("active", active.revision, &active.head, None)
            .await
            .unwrap()
    );
    assert_eq!(w.sweep.sweep().await.unwrap().sessions_deleted, 1);
    assert_eq!(stored_rows(&db, "within_grace").await, [0, 0, 0, 0]);
    assert_eq!(stored_rows(&db, "active").await, whole);
}

/// The ids `expired_sessions` finds, `limit` at most, after `after`.
async fn expired_by(
    store: &SeaOrmRetentionRepository,
    cutoff: DateTime<Utc>,
    after: Option<&str>,
    limit: u64,
) -> Vec<String> {
    let all = store.expired_sessions(cutoff, None, 100).await.unwrap();
    let after = after.map(|id| all.iter().find(|s| s.session_id == id).unwrap().clone());
    let page = store.expired_sessions(cutoff, after.as_ref(), limit).await.unwrap();
    page.into_iter().map(|s| s.session_id).collect()
}

async fn the_walk_finds_the_sessions_expired_by_its_cutoff_as_last_written(db: DatabaseConnection) {
    let w = world(&db, 1000);
    let store = SeaOrmRetentionRepository::new(db.clone());
    let now = w.clock.now();
    let day = 86_400;
    let stored = [
        ("expired", now - Duration::days(2), day),
        ("alive", now - Duration::hours(1), day),
        ("hosted_century", now - Duration::days(1), 100 * 365 * day),
        ("never_expires", now - Duration::days(400), u64::MAX),
    ];
    for (id, last_activity_at, ttl_seconds) in stored {
        let mut record = support::session(id);
        record.head.last_activity_at = last_activity_at;
        record.head.ttl_seconds = ttl_seconds;
        w.sessions.insert(&record).await.unwrap();
    }
    assert_eq!(expired_by(&store, now, None, 10).await, ["expired"]);

    // A write that moves its expiry (an update, a heartbeat) moves it out of the walk, and back in
    // once it has expired again.
    let mut expired = w.sessions.get("expired").await.unwrap().unwrap();
    expired.head.last_activity_at = now;
    assert!(
        w.sessions
            .save_head("expired", expired.revision, &expired.head, None)
            .await
            .unwrap()
    );
    assert!(expired_by(&store, now, None, 10).await.is_empty());
    let a_day_on = now + Duration::days(1) + Duration::minutes(1);
    assert_eq!(
        expired_by(&store, a_day_on, None, 10).await,
        ["alive", "expired"],
        "soonest expired first"
    );
    assert_eq!(expired_by(&store, a_day_on, None, 1).await, ["alive"]);
    assert_eq!(expired_by(&store, a_day_on, Some("alive"), 1).await, ["expired"]);
    assert!(expired_by(&store, a_day_on, Some("expired"), 1).await.is_empty());
    assert_eq!(
        expired_by(&store, now + Duration::days(365 * 99), None, 10).await,
        ["alive", "expired"],
        "a hosted render lives its century, and one without an end forever"
    );
}

async fn trimming_keeps_what_a_replay_serves_and_every_undrained_gesture(db: DatabaseConnection) {
    let w = world(&db, 3);
    for id in ["s1", "s2", "s3"] {
        w.sessions.insert(&support::session(id)).await.unwrap();
    }
    for n in 1..=10 {
        deliver(&w.events, "s1", json!(format!("line {n}"))).await;
        w.events.append_action(&gesture("s1", n)).await.unwrap();
    }
    // s2: six gestures, all undrained, more than a replay serves; s3: fewer than it serves.
    for n in 1..=6 {
        w.events.append_action(&gesture("s2", n)).await.unwrap();
    }
    deliver(&w.events, "s3", json!("only")).await;
    // Gestures 1..=4 drained, 5..=10 not.
    assert_eq!(w.events.drain("s1", Utc::now(), drain(4)).await.unwrap().len(), 4);

    let sweep = w.sweep.sweep().await.unwrap();
    assert_eq!((sweep.deliveries_trimmed, sweep.gestures_trimmed), (7, 4), "{sweep:?}");
    assert_eq!(
        keys_of(&db, "stream_envelopes", "seq", "s1").await,
        [8, 9, 10],
        "the newest deliveries a replay serves"
    );
    assert_eq!(
        keys_of(&db, "action_events", "sequence", "s1").await,
        (5..=10).collect::<Vec<_>>(),
        "the drained ones go, every undrained one stays"
    );
    assert_eq!(
        keys_of(&db, "action_events", "sequence", "s2").await,
        (1..=6).collect::<Vec<_>>()
    );
    assert_eq!(keys_of(&db, "stream_envelopes", "seq", "s3").await, [1]);

    // What a replay from the start serves is what it served before: the newest three.
    let replayed = w.events.streams_since("s1", 0, None, 4, usize::MAX).await.unwrap();
    assert_eq!(replayed.iter().map(|e| e.seq).collect::<Vec<_>>(), [8, 9, 10]);
    let replayed = w.events.actions_since("s1", 0, 4, usize::MAX).await.unwrap();
    assert_eq!(replayed.iter().map(|e| e.sequence).collect::<Vec<_>>(), [7, 8, 9, 10]);
    // An agent drains every gesture it had not seen, oldest first.
    let drained = w.events.drain("s1", Utc::now(), drain(100)).await.unwrap();
    assert_eq!(
        drained.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        (5..=10).collect::<Vec<_>>()
    );
    // Numbering goes on after the newest.
    assert_eq!(deliver(&w.events, "s1", json!("after")).await, 11);
    assert_eq!(w.events.append_action(&gesture("s1", 11)).await.unwrap().0.sequence, 11);

    // Drained now, they go down to what a replay serves; the next sweep finds them written lately.
    w.clock.advance(Duration::minutes(1));
    let sweep = w.sweep.sweep().await.unwrap();
    assert_eq!((sweep.deliveries_trimmed, sweep.gestures_trimmed), (1, 4), "{sweep:?}");
    assert_eq!(keys_of(&db, "action_events", "sequence", "s1").await, [9, 10, 11]);
    assert_eq!(keys_of(&db, "stream_envelopes", "seq", "s1").await, [9, 10, 11]);
    assert_eq!(w.sweep.sweep().await.unwrap().deliveries_trimmed, 0, "nothing twice");
}

/// A replay carries at most 8 MiB of payloads (the newest always): the rest is never served.
async fn trimming_keeps_the_newest_deliveries_that_fit_in_a_replays_bytes(db: DatabaseConnection) {
    let w = world(&db, 1000);
    w.sessions.insert(&support::session("big")).await.unwrap();
    deliver(&w.events, "big", json!("small")).await;
    let three_mib = "x".repeat(3 * 1024 * 1024);
    for _ in 0..3 {
        deliver(&w.events, "big", json!(three_mib)).await;
    }
    let sweep = w.sweep.sweep().await.unwrap();
    assert_eq!(sweep.deliveries_trimmed, 2, "{sweep:?}");
    assert_eq!(
        keys_of(&db, "stream_envelopes", "seq", "big").await,
        [3, 4],
        "two fit in 8 MiB"
    );
}

async fn racing_sweeps_delete_each_row_once(db: DatabaseConnection) {
    let w = world(&db, 2);
    let now = w.clock.now();
    for n in 0..6 {
        stored_session(&w, &format!("old{n}"), now - Duration::days(10), false).await;
    }
    stored_session(&w, "live", now, false).await;
    let other = world(&db, 2);
    other.clock.set(now);
    let (a, b) = tokio::join!(w.sweep.sweep(), other.sweep.sweep());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.sessions_deleted + b.sessions_deleted, 6, "{a:?} {b:?}");
    for table in KEPT_TABLES {
        let left = support::count_rows(&db, table).await;
        let live = rows_of(&db, table, "live").await;
        assert_eq!(left, live, "{table}: only the live session's rows");
    }
    // Of the live session: the newest two deliveries and the three undrained gestures.
    assert_eq!(stored_rows(&db, "live").await, [1, 3, 3, 2]);
}
