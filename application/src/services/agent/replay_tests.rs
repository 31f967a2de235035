//! Stream and gesture replays over the in-memory store: the count and byte bounds, the upper bound a live
//! tail fills up to, and when a replay is a gap.

use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};

use super::live::REPLAY_MAX_PAYLOAD_BYTES;
use super::*;
use crate::ports::agent::{ActionEventRecord, EventRepository, NewActionEvent, StreamEnvelope};
use crate::testing::AgentFakes;

async fn append(fakes: &AgentFakes, payload: Value) {
    fakes
        .store
        .append_stream("s", "log", "append", &payload, false, Utc::now())
        .await
        .unwrap();
}

fn service(fakes: &AgentFakes) -> AgentService {
    AgentService::new(
        fakes.ports(),
        AgentFakes::settings(),
        GenerationQueue::new(1, 1, Duration::from_secs(1)),
    )
}

fn seqs(replay: &Replay<StreamEnvelope>) -> Vec<i64> {
    replay.items.iter().map(|e| e.seq).collect()
}

#[tokio::test]
async fn a_replay_is_bounded_above_and_by_bytes_and_says_when_it_left_some_out() {
    let fakes = AgentFakes::default();
    for n in 1..=5 {
        append(&fakes, json!(format!("e{n}"))).await;
    }
    let live = service(&fakes).live();

    let filling = live.replay_streams_until("s", 1, Some(3)).await.unwrap();
    assert_eq!(
        (seqs(&filling), filling.gap),
        (vec![2, 3], false),
        "up to the envelope heard"
    );
    let everything = live.replay_streams("s", 0).await.unwrap();
    assert_eq!((seqs(&everything), everything.gap), (vec![1, 2, 3, 4, 5], false));
    let below_zero = live.replay_streams("s", -7).await.unwrap();
    assert_eq!((seqs(&below_zero), below_zero.gap), (vec![1, 2, 3, 4, 5], false));
    let past_the_end = live.replay_streams("s", i64::MAX).await.unwrap();
    assert_eq!((seqs(&past_the_end), past_the_end.gap), (vec![], false));

    // Two payloads that together pass the byte bound: only the newest is replayed, a gap.
    let big = "b".repeat(REPLAY_MAX_PAYLOAD_BYTES / 2 + 1);
    append(&fakes, json!(big)).await;
    append(&fakes, json!(big)).await;
    let cut = live.replay_streams("s", 0).await.unwrap();
    assert_eq!((seqs(&cut), cut.gap), (vec![7], true));
    let cut_below = live.replay_streams_until("s", 0, Some(6)).await.unwrap();
    assert_eq!((seqs(&cut_below), cut_below.gap), (vec![1, 2, 3, 4, 5, 6], false));
}

async fn gesture(fakes: &AgentFakes, data: Value) {
    let gesture = NewActionEvent {
        session_id: "s".into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: data,
        ui_context: json!({}),
        fired_at: Utc::now(),
    };
    fakes.store.append_action(&gesture).await.unwrap();
}

#[tokio::test]
async fn a_gesture_replay_is_bounded_by_bytes_and_says_when_it_left_some_out() {
    let fakes = AgentFakes::default();
    gesture(&fakes, json!("small")).await;
    let live = service(&fakes).live();
    let sequences = |replay: &Replay<ActionEventRecord>| replay.items.iter().map(|e| e.sequence).collect::<Vec<_>>();

    let whole = live.replay_actions("s", 0).await.unwrap();
    assert_eq!((sequences(&whole), whole.gap), (vec![1], false));
    // Two gestures that together pass the byte bound: only the newest is replayed, a gap.
    let big = "b".repeat(REPLAY_MAX_PAYLOAD_BYTES / 2 + 1);
    gesture(&fakes, json!(big)).await;
    gesture(&fakes, json!(big)).await;
    let cut = live.replay_actions("s", 0).await.unwrap();
    assert_eq!((sequences(&cut), cut.gap), (vec![3], true));
    let from_two = live.replay_actions("s", 2).await.unwrap();
    assert_eq!((sequences(&from_two), from_two.gap), (vec![3], false));
}

#[tokio::test]
async fn a_replay_head_reads_the_oldest_of_the_window_up_to_its_bytes_and_says_it_stopped() {
    let fakes = AgentFakes::default();
    // Payloads of 100 bytes stored: `"x…x"`.
    for _ in 1..=5 {
        append(&fakes, json!("x".repeat(98))).await;
    }
    let live = service(&fakes).live();
    let head = live.replay_streams_head("s", 0, 250).await.unwrap();
    assert_eq!((seqs(&head), head.gap, head.cut), (vec![1, 2], false, true));
    let head = live.replay_streams_head("s", 2, 10).await.unwrap();
    assert_eq!(
        (seqs(&head), head.gap, head.cut),
        (vec![3], false, true),
        "the first always"
    );
    let head = live.replay_streams_head("s", 2, 300).await.unwrap();
    assert_eq!((seqs(&head), head.gap, head.cut), (vec![3, 4, 5], false, false));
    // The window is the whole replay's: two payloads past its bytes leave the older out, a gap,
    // and the head starts at the window's oldest.
    let big = "b".repeat(REPLAY_MAX_PAYLOAD_BYTES / 2 + 1);
    append(&fakes, json!(big)).await;
    append(&fakes, json!(big)).await;
    let head = live.replay_streams_head("s", 0, 250).await.unwrap();
    assert_eq!((seqs(&head), head.gap, head.cut), (vec![7], true, false));

    gesture(&fakes, json!("x".repeat(80))).await;
    gesture(&fakes, json!("x".repeat(80))).await;
    let head = live.replay_actions_head("s", 0, 100).await.unwrap();
    assert_eq!(
        (
            head.items.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            head.gap,
            head.cut
        ),
        (vec![1], false, true)
    );
}

#[tokio::test]
async fn a_replay_head_past_the_buffer_is_a_gap_from_the_windows_oldest() {
    let fakes = AgentFakes::default();
    for n in 1..=1_005 {
        append(&fakes, json!(n)).await;
    }
    let live = service(&fakes).live();
    let buffer = i64::try_from(live.replay_buffer).unwrap();
    let head = live.replay_streams_head("s", 0, 20).await.unwrap();
    let whole = live.replay_streams("s", 0).await.unwrap();
    assert_eq!(head.gap, whole.gap);
    assert!(head.gap && head.cut);
    assert_eq!(seqs(&head)[0], 1_005 - buffer + 1, "the buffer's oldest");
    assert_eq!(seqs(&head), seqs(&whole)[..head.items.len()].to_vec());
}
