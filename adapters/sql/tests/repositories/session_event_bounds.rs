//! A drain (`svc_consume`) and a gesture replay (`subscribe` with `sinceSequence`, a poll) read
//! at most a bound of stored bytes: gestures carry up to a frame of data and their whole context,
//! and a session can hold a thousand of them.

use chrono::Utc;
use sea_orm::DatabaseConnection;
use serde_json::{Value, json};
use svc_application::ports::agent::{DrainBound, EventRepository, NewActionEvent, SessionRepository};
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(
    a_drain_takes_the_oldest_gestures_that_fit_and_leaves_the_rest,
    a_drain_takes_at_most_its_count_of_gestures,
    a_gesture_replay_takes_the_newest_that_fit
);

/// A gesture whose stored action data and context are `bytes` long together.
fn gesture(session_id: &str, tag: &str, bytes: usize) -> NewActionEvent {
    let context = json!({});
    let overhead = json!({ "tag": tag, "fill": "" }).to_string().len() + context.to_string().len();
    NewActionEvent {
        session_id: session_id.into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: json!({ "tag": tag, "fill": "x".repeat(bytes - overhead) }),
        ui_context: context,
        fired_at: Utc::now(),
    }
}

/// A drain of at most `bytes` (and any count this test reaches).
fn bytes(bytes: usize) -> DrainBound {
    DrainBound { gestures: 1_000, bytes }
}

fn tags(events: &[svc_application::ports::agent::ActionEventRecord]) -> Vec<Value> {
    events.iter().map(|e| e.action_data["tag"].clone()).collect()
}

async fn with_gestures(db: &DatabaseConnection, tags: &[&str]) -> SeaOrmEventRepository {
    let sessions = SeaOrmSessionRepository::new(db.clone());
    sessions.insert(&support::session("s1")).await.unwrap();
    let events = SeaOrmEventRepository::new(db.clone());
    for tag in tags {
        events.append_action(&gesture("s1", tag, 1_000)).await.unwrap();
    }
    events
}

async fn a_drain_takes_the_oldest_gestures_that_fit_and_leaves_the_rest(db: DatabaseConnection) {
    let events = with_gestures(&db, &["a", "b", "c", "d"]).await;
    let drained = events.drain("s1", Utc::now(), bytes(2_500)).await.unwrap();
    assert_eq!(
        tags(&drained),
        [json!("a"), json!("b")],
        "two of 1,000 bytes fit in 2,500"
    );
    // A bound below one gesture still takes the oldest: it was admitted when it was stored.
    let drained = events.drain("s1", Utc::now(), bytes(10)).await.unwrap();
    assert_eq!(tags(&drained), [json!("c")]);
    let drained = events.drain("s1", Utc::now(), bytes(2_500)).await.unwrap();
    assert_eq!(tags(&drained), [json!("d")]);
    assert!(events.drain("s1", Utc::now(), bytes(2_500)).await.unwrap().is_empty());
}

async fn a_drain_takes_at_most_its_count_of_gestures(db: DatabaseConnection) {
    let events = with_gestures(&db, &["a", "b", "c"]).await;
    let two = DrainBound {
        gestures: 2,
        bytes: usize::MAX,
    };
    let drained = events.drain("s1", Utc::now(), two).await.unwrap();
    assert_eq!(tags(&drained), [json!("a"), json!("b")], "the oldest two");
    let drained = events.drain("s1", Utc::now(), two).await.unwrap();
    assert_eq!(tags(&drained), [json!("c")], "the rest on the next drain");
}

async fn a_gesture_replay_takes_the_newest_that_fit(db: DatabaseConnection) {
    let events = with_gestures(&db, &["a", "b", "c", "d"]).await;
    let replay = events.actions_since("s1", 0, 100, 2_500).await.unwrap();
    assert_eq!(tags(&replay), [json!("c"), json!("d")], "the newest two, oldest first");
    let replay = events.actions_since("s1", 0, 100, 10).await.unwrap();
    assert_eq!(tags(&replay), [json!("d")], "the newest always");
    let replay = events.actions_since("s1", 1, 2, usize::MAX).await.unwrap();
    assert_eq!(tags(&replay), [json!("c"), json!("d")], "the count bound still holds");
    let all = events.actions_since("s1", 0, 100, usize::MAX).await.unwrap();
    assert_eq!(all.iter().map(|e| e.sequence).collect::<Vec<_>>(), [1, 2, 3, 4]);
}
