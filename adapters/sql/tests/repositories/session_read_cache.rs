//! The session read cache (the server uses it where this process alone writes: SQLite, and
//! PostgreSQL claimed by a sole server): a read through the repositories sees every write made
//! through them, whichever repository made it.

use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde_json::json;
use svc_application::ports::agent::{EventRepository, SessionRepository};
use svc_application::services::agent::DRAIN_BOUND;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};
use svc_sql::{ReadCache, Writer};

use crate::support;

support::backend_tests!(
    reads_through_the_cache_see_every_write,
    a_heartbeat_keeps_the_cached_row_as_stored,
    a_write_whose_caller_leaves_still_commits_and_is_forgotten,
    shared_reads_of_a_kept_row_copy_nothing_until_it_changes
);

/// The server's wiring: the group-commit writer on SQLite, direct writes elsewhere, and one read
/// cache both repositories read and forget through.
fn wired(db: &DatabaseConnection, writer: Option<Writer>) -> (SeaOrmSessionRepository, SeaOrmEventRepository) {
    let cache = Some(ReadCache::new());
    let sessions = SeaOrmSessionRepository::new(db.clone())
        .with_writer(writer.clone())
        .with_read_cache(cache.clone());
    let events = SeaOrmEventRepository::new(db.clone())
        .with_writer(writer)
        .with_read_cache(cache);
    (sessions, events)
}

/// Reads of a kept session share the kept row (a read path copies none of its strings and JSON);
/// a write makes the next read another row, with what was written.
async fn shared_reads_of_a_kept_row_copy_nothing_until_it_changes(db: DatabaseConnection) {
    let (sessions, _) = wired(&db, Writer::for_database(&db));
    sessions.insert(&support::session("s1")).await.unwrap();
    let first = sessions.get_shared("s1").await.unwrap().unwrap();
    let again = sessions.get_shared("s1").await.unwrap().unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again), "the kept row, shared");
    let (with_flag, _) = sessions.get_with_undrained("s1").await.unwrap().unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &with_flag),
        "beside the undrained flag too"
    );

    let mut head = first.head.clone();
    head.props = json!({ "title": "second" });
    assert!(sessions.save_head("s1", first.revision, &head, None).await.unwrap());
    let after = sessions.get_shared("s1").await.unwrap().unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &after));
    assert_eq!(
        (after.head.props.clone(), first.head.props.clone()),
        (json!({ "title": "second" }), json!({ "title": "first" })),
        "a reader holding the old row keeps what it read"
    );
}

async fn reads_through_the_cache_see_every_write(db: DatabaseConnection) {
    let (sessions, events) = wired(&db, Writer::for_database(&db));
    sessions.insert(&support::session("s1")).await.unwrap();

    let read = sessions.get("s1").await.unwrap().unwrap();
    assert_eq!(read.head.props, json!({ "title": "first" }));
    let mut head = read.head.clone();
    head.props = json!({ "title": "second" });
    head.epoch = 2;
    assert!(sessions.save_head("s1", read.revision, &head, None).await.unwrap());
    let read = sessions.get("s1").await.unwrap().unwrap();
    assert_eq!(
        read.head.props,
        json!({ "title": "second" }),
        "the new head, not the kept one"
    );
    assert_eq!(read.revision, 1);

    // A heartbeat (same props, a new time): the next read sees it.
    let mut beat = read.head.clone();
    beat.last_activity_at += chrono::Duration::seconds(5);
    assert!(sessions.save_head("s1", read.revision, &beat, None).await.unwrap());
    let read = sessions.get("s1").await.unwrap().unwrap();
    assert_eq!(read.head.last_activity_at, beat.last_activity_at);
    assert_eq!(read.revision, 2);
    assert!(
        !sessions.save_head("s1", 1, &beat, None).await.unwrap(),
        "a stale revision writes nothing"
    );
    assert_eq!(sessions.get("s1").await.unwrap().unwrap().revision, 2);

    sessions
        .set_context_snapshot("s1", &json!({ "tab": "b" }))
        .await
        .unwrap();
    assert_eq!(
        sessions.get("s1").await.unwrap().unwrap().context_snapshot,
        json!({ "tab": "b" })
    );

    assert!(
        events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().is_empty(),
        "nothing yet (now known quiet)"
    );
    events.append_action(&support::gesture("s1")).await.unwrap();
    assert_eq!(
        sessions.get("s1").await.unwrap().unwrap().event_sequence,
        1,
        "the gesture moved the sequence"
    );
    assert_eq!(
        events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().len(),
        1,
        "a quiet session that got a gesture drains it"
    );
    assert!(events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().is_empty());

    assert_eq!(events.last_stream_seq("s1").await.unwrap(), 0);
    let delivered = events
        .append_stream("s1", "ticks", "append", &json!({ "n": 1 }), false, Utc::now())
        .await
        .unwrap();
    assert_eq!(
        events.last_stream_seq("s1").await.unwrap(),
        delivered.seq,
        "the cursor moved"
    );
}

/// A heartbeat's write moves the kept row on instead of forgetting it (a second read asks the
/// database nothing) when the group-commit writer orders it (SQLite), and forgets it otherwise;
/// what is kept is what is stored, although a gesture moved the row's sequence between the read
/// the heartbeat started from and its write.
async fn a_heartbeat_keeps_the_cached_row_as_stored(db: DatabaseConnection) {
    let writer = Writer::for_database(&db);
    let on_writer = writer.is_some();
    let (sessions, events) = wired(&db, writer);
    let stored = SeaOrmSessionRepository::new(db.clone());
    sessions.insert(&support::session("s1")).await.unwrap();

    let read = sessions.get("s1").await.unwrap().unwrap();
    events.append_action(&support::gesture("s1")).await.unwrap();
    let mut beat = read.head.clone();
    beat.last_activity_at += chrono::Duration::seconds(5);
    assert!(sessions.save_head("s1", read.revision, &beat, None).await.unwrap());
    let kept = sessions.get("s1").await.unwrap().unwrap();
    assert_eq!(
        kept.event_sequence, 1,
        "the gesture's sequence, not the one read before it"
    );
    assert_eq!(kept, stored.get("s1").await.unwrap().unwrap(), "kept as stored");

    let mut beat = kept.head.clone();
    beat.last_activity_at += chrono::Duration::seconds(5);
    assert!(sessions.save_head("s1", kept.revision, &beat, None).await.unwrap());
    // Changed behind the repositories' back: a read from the database would see it.
    db.execute_unprepared("UPDATE sessions SET intent = 'changed' WHERE session_id = 's1'")
        .await
        .unwrap();
    let read = sessions.get("s1").await.unwrap().unwrap();
    assert_eq!((read.revision, read.head.last_activity_at), (2, beat.last_activity_at));
    if on_writer {
        assert_eq!(read.intent, "card", "the heartbeat moved the kept row on");
    } else {
        assert_eq!(
            read.intent, "changed",
            "without the writer the heartbeat forgot the row"
        );
    }
}

/// A request that leaves (its client hung up) once its write started: the write commits anyway,
/// as the group-commit writer runs it, and the kept row is forgotten with it, so no read answers
/// the row as it was before a write the database holds.
async fn a_write_whose_caller_leaves_still_commits_and_is_forgotten(db: DatabaseConnection) {
    let (sessions, _) = wired(&db, Writer::for_database(&db));
    let stored = SeaOrmSessionRepository::new(db.clone());
    sessions.insert(&support::session("s1")).await.unwrap();
    let read = sessions.get("s1").await.unwrap().unwrap();
    let mut head = read.head.clone();
    head.props = json!({ "title": "second" });
    head.epoch = 2;

    let started = futures_util::FutureExt::now_or_never(sessions.save_head("s1", read.revision, &head, None));
    assert!(started.is_none(), "a write waits for its commit");
    // Dropped: the caller is gone.

    // The kept row goes just after the commit, in the task that ran it; an entry left behind
    // would be answered until it idled out, minutes later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    for (repository, what) in [
        (&stored, "never committed"),
        (&sessions, "committed but stayed kept as before"),
    ] {
        while repository.get("s1").await.unwrap().unwrap().head.props != head.props {
            assert!(
                std::time::Instant::now() < deadline,
                "the write of a caller that left {what}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
