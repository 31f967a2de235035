//! A delivery or a gesture too large to parse on an async worker (a payload up to a request body)
//! is parsed through the CPU gate when a replay or a drain reads it (`large_rows.rs`), as a large
//! session row is: while every slot is taken its read waits for one, and reads of small rows go
//! on meanwhile.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use sea_orm::DatabaseConnection;
use serde_json::{Value, json};
use svc_application::ports::agent::{DrainBound, EventRepository, NewActionEvent, SessionRepository};
use svc_application::ports::retention::ReplayWindow;
use svc_application::services::cpu_gate::CpuGate;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(a_large_delivery_or_gesture_waits_for_a_cpu_slot_while_small_reads_go_on);

const WHOLE: ReplayWindow = ReplayWindow {
    count: 100,
    bytes: usize::MAX,
};

/// JSON whose stored text (about 200 KB) is over the size parsed on the gate.
fn large(tag: &str) -> Value {
    json!({ "tag": tag, "text": "x".repeat(200_000) })
}

async fn a_large_delivery_or_gesture_waits_for_a_cpu_slot_while_small_reads_go_on(db: DatabaseConnection) {
    SeaOrmSessionRepository::new(db.clone())
        .insert(&support::session("s1"))
        .await
        .unwrap();
    let gate = CpuGate::new(1, Duration::from_secs(30));
    let events = Arc::new(SeaOrmEventRepository::new(db.clone()).with_parse_gate(Some(gate.clone())));
    for payload in [json!("small"), large("delivery")] {
        events
            .append_stream("s1", "log", "append", &payload, false, Utc::now())
            .await
            .unwrap();
    }
    let gesture = NewActionEvent {
        session_id: "s1".into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: large("gesture"),
        ui_context: json!({}),
        fired_at: Utc::now(),
    };
    events.append_action(&gesture).await.unwrap();
    let release = support::hold_the_slot(&gate).await;

    let reading = Arc::clone(&events);
    let delivery = tokio::spawn(async move { reading.streams_window_head("s1", 1, WHOLE, usize::MAX).await });
    let reading = Arc::clone(&events);
    let replayed = tokio::spawn(async move { reading.actions_window_head("s1", 0, WHOLE, usize::MAX).await });
    let reading = Arc::clone(&events);
    let bound = DrainBound {
        gestures: 10,
        bytes: usize::MAX,
    };
    let drained = tokio::spawn(async move { reading.drain("s1", Utc::now(), bound).await });
    // Reads of the small delivery go on meanwhile, more than a parse of the large ones would take.
    for _ in 0..20 {
        let head = events.streams_window_head("s1", 0, WHOLE, 1).await.unwrap();
        assert_eq!(
            head.items.iter().map(|e| &e.payload).collect::<Vec<_>>(),
            [&json!("small")]
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !delivery.is_finished() && !replayed.is_finished() && !drained.is_finished(),
        "the large rows are parsed on the gate, whose one slot is taken"
    );

    release.send(()).unwrap();
    let delivery = delivery.await.unwrap().unwrap();
    assert_eq!(delivery.items[0].payload, large("delivery"));
    let replayed = replayed.await.unwrap().unwrap();
    assert_eq!(replayed.items[0].action_data, large("gesture"));
    let drained = drained.await.unwrap().unwrap();
    assert_eq!(drained[0].action_data, large("gesture"));
}
