//! A polling answer carries at most 1 MiB of a replay window of up to 8 MiB: the store reads only
//! the window's head, the oldest rows in order while their stored JSON fits the read's budget (the
//! first always), and says whether it stopped early and whether the window left older rows out.

use chrono::Utc;
use sea_orm::DatabaseConnection;
use serde_json::json;
use svc_application::ports::agent::{EventRepository, NewActionEvent, SessionRepository};
use svc_application::ports::retention::ReplayWindow;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(
    a_stream_window_head_reads_the_oldest_envelopes_that_fit_in_order,
    a_gesture_window_head_reads_the_oldest_gestures_that_fit_in_order
);

/// Every row in this file stores 1,000 bytes of JSON.
const ROW_BYTES: usize = 1_000;

/// A window of any count and size these tests reach.
const WHOLE: ReplayWindow = ReplayWindow {
    count: 100,
    bytes: usize::MAX,
};

async fn session(db: &DatabaseConnection) -> SeaOrmEventRepository {
    SeaOrmSessionRepository::new(db.clone())
        .insert(&support::session("s1"))
        .await
        .unwrap();
    SeaOrmEventRepository::new(db.clone())
}

async fn a_stream_window_head_reads_the_oldest_envelopes_that_fit_in_order(db: DatabaseConnection) {
    let events = session(&db).await;
    // `"x…x"`: the quotes and 998 letters.
    let payload = json!("x".repeat(ROW_BYTES - 2));
    for _ in 0..6 {
        events
            .append_stream("s1", "log", "append", &payload, false, Utc::now())
            .await
            .unwrap();
    }
    let seqs = |head: &svc_application::ports::agent::WindowHead<_>| {
        let items: &Vec<svc_application::ports::agent::StreamEnvelope> = &head.items;
        (
            items.iter().map(|e| e.seq).collect::<Vec<_>>(),
            head.cut,
            head.overflowed,
        )
    };

    let head = events.streams_window_head("s1", 0, WHOLE, 2_500).await.unwrap();
    assert_eq!(
        seqs(&head),
        (vec![1, 2], true, false),
        "two of 1,000 bytes fit in 2,500"
    );
    assert_eq!(
        head.items[0].payload, payload,
        "the rows themselves, not only their keys"
    );
    let head = events.streams_window_head("s1", 2, WHOLE, 2_500).await.unwrap();
    assert_eq!(
        seqs(&head),
        (vec![3, 4], true, false),
        "the next read goes on after the cursor"
    );
    let head = events.streams_window_head("s1", 0, WHOLE, 10).await.unwrap();
    assert_eq!(
        seqs(&head),
        (vec![1], true, false),
        "the oldest always, whatever its size"
    );
    let head = events.streams_window_head("s1", 3, WHOLE, 3_000).await.unwrap();
    assert_eq!(
        seqs(&head),
        (vec![4, 5, 6], false, false),
        "exactly the budget: all, not cut"
    );

    // The window is the whole replay's: its newest 4 of 6 (older ones left out), or its newest
    // that fit in 3,500 bytes; the head is read from the window's oldest.
    let four = ReplayWindow { count: 4, ..WHOLE };
    let head = events.streams_window_head("s1", 0, four, 2_500).await.unwrap();
    assert_eq!(seqs(&head), (vec![3, 4], true, true));
    let head = events.streams_window_head("s1", 2, four, usize::MAX).await.unwrap();
    assert_eq!(
        seqs(&head),
        (vec![3, 4, 5, 6], false, false),
        "4 after the cursor: none left out"
    );
    let small = ReplayWindow { bytes: 3_500, ..WHOLE };
    let head = events.streams_window_head("s1", 0, small, 1_500).await.unwrap();
    assert_eq!(seqs(&head), (vec![4], true, false));
    let head = events.streams_window_head("s1", 6, WHOLE, 2_500).await.unwrap();
    assert_eq!(seqs(&head), (vec![], false, false), "nothing after the last");
}

/// A gesture whose stored action data and context are [`ROW_BYTES`] long together.
fn gesture(tag: &str) -> NewActionEvent {
    let context = json!({});
    let overhead = json!({ "tag": tag, "fill": "" }).to_string().len() + context.to_string().len();
    NewActionEvent {
        session_id: "s1".into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: json!({ "tag": tag, "fill": "x".repeat(ROW_BYTES - overhead) }),
        ui_context: context,
        fired_at: Utc::now(),
    }
}

async fn a_gesture_window_head_reads_the_oldest_gestures_that_fit_in_order(db: DatabaseConnection) {
    let events = session(&db).await;
    for tag in ["a", "b", "c", "d", "e"] {
        events.append_action(&gesture(tag)).await.unwrap();
    }
    let tags = |head: &svc_application::ports::agent::WindowHead<_>| {
        let items: &Vec<svc_application::ports::agent::ActionEventRecord> = &head.items;
        let tags = items.iter().map(|e| e.action_data["tag"].as_str().unwrap().to_owned());
        (tags.collect::<Vec<_>>(), head.cut, head.overflowed)
    };
    let head = events.actions_window_head("s1", 0, WHOLE, 2_500).await.unwrap();
    assert_eq!(tags(&head), (vec!["a".into(), "b".into()], true, false));
    let head = events.actions_window_head("s1", 2, WHOLE, 2_500).await.unwrap();
    assert_eq!(tags(&head), (vec!["c".into(), "d".into()], true, false));
    let head = events.actions_window_head("s1", 1, WHOLE, usize::MAX).await.unwrap();
    assert_eq!(
        tags(&head),
        (vec!["b".into(), "c".into(), "d".into(), "e".into()], false, false)
    );
    let three = ReplayWindow { count: 3, ..WHOLE };
    let head = events.actions_window_head("s1", 0, three, 10).await.unwrap();
    assert_eq!(
        tags(&head),
        (vec!["c".into()], true, true),
        "the window's oldest, alone"
    );
}
