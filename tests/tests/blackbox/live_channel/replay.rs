//! Replay on subscribe: session events then stream envelopes after the cursors, and the gaps a
//! cursor older than the buffer, or more than 8 MiB of payloads, report.

use std::time::Duration;

use serde_json::json;
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{action, card, poll, subscribed};

on_every_backend!(Auth::DevAllowAll => a_cursor_below_zero_replays_everything_without_a_gap);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    replay_sends_events_then_envelopes_after_the_cursors,
    a_replay_carries_at_most_eight_mebibytes_of_payloads,
    a_replay_of_megabytes_sends_every_frame_in_order_once_then_the_live_tail,
);

async fn replay_sends_events_then_envelopes_after_the_cursors(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut first, ack) = subscribed(&app, &slice, json!({})).await;
    let base = ack["lastStreamSeq"].as_i64().unwrap();
    for n in 1..=3 {
        first
            .send(
                "action",
                action(&session, "approve", json!({ "note": format!("n{n}") }), n),
            )
            .await;
        first.expect("system").await;
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("line {n}") }),
        )
        .await;
        first.expect("data").await;
    }
    drop(first);
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": base + 1, "sinceSequence": 1 })).await;
    assert_eq!(ack["replay"]["gap"], false);
    assert_eq!(ack["lastSequence"], 3);
    let mut kinds = vec![];
    for _ in 0..4 {
        let f = ws.recv().await;
        kinds.push(f["type"].as_str().unwrap().to_owned());
        match f["type"].as_str().unwrap() {
            "render_event" => assert!(f["payload"]["sequence"].as_i64().unwrap() > 1),
            "data" => assert!(f["payload"]["seq"].as_i64().unwrap() > base + 1),
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(
        kinds,
        ["render_event", "render_event", "data", "data"],
        "session events first, then stream envelopes"
    );
    ws.expect_silence(Duration::from_millis(200)).await;
}

async fn a_cursor_below_zero_replays_everything_without_a_gap(app: TestApp) {
    let (session, slice) = card(&app).await;
    for n in 0..2 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("l{n}") }),
        )
        .await;
    }
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": -5 })).await;
    assert_eq!(ack["replay"]["gap"], false, "{}", ack["replay"]);
    // Every envelope from the first (the render's lifecycle stages come first), no gap frame.
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    let mut payloads = Vec::new();
    for seq in 1..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq);
        payloads.push(frame["payload"].clone());
    }
    assert_eq!(payloads[payloads.len() - 2..], [json!("l0"), json!("l1")]);
}

/// Payloads are as large as a request body allows; a replay of the whole buffer of them was held
/// at once. It carries the newest that fit in 8 MiB of payload JSON, and says the rest is a gap.
async fn a_replay_carries_at_most_eight_mebibytes_of_payloads(app: TestApp) {
    const CAP: usize = 8 * 1024 * 1024;
    let text = "p".repeat(1_000_000);
    let encoded = text.len() + 2; // the quotes of a JSON string
    let (session, slice) = card(&app).await;
    for _ in 0..10 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": text }),
        )
        .await;
    }
    let fitting = (CAP / encoded) as i64;
    assert!(fitting < 10, "the test emits more than fits");
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0 })).await;
    assert_eq!(ack["replay"]["gap"], true, "{}", ack["replay"]);
    assert_eq!(ws.expect("system").await["event"], "replay_gap");
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    for seq in last - fitting + 1..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq, "the newest, oldest first");
        assert_eq!(frame["payload"].as_str().map(str::len), Some(text.len()));
    }
    ws.expect_silence(Duration::from_millis(300)).await;

    // From a cursor inside what fits, nothing is left out.
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": last - 2 })).await;
    assert_eq!(ack["replay"]["gap"], false, "{}", ack["replay"]);
    for seq in last - 1..=last {
        assert_eq!(ws.expect("data").await["seq"].as_i64().unwrap(), seq);
    }
}

/// A replay of megabytes is read and sent a piece of about a megabyte at a time
/// (`replay_pieces`): the card still gets every gesture, then every envelope, in order and each
/// once, then the live tail.
async fn a_replay_of_megabytes_sends_every_frame_in_order_once_then_the_live_tail(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut first, _) = subscribed(&app, &slice, json!({})).await;
    let note = "n".repeat(200_000);
    for n in 1..=6 {
        let data = json!({ "note": format!("{n}{note}") });
        first.send("action", action(&session, "approve", data, n)).await;
        assert_eq!(first.expect("system").await["event"], "action_stored");
    }
    drop(first);
    let text = "p".repeat(700_000);
    for n in 1..=6 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("{n}{text}") }),
        )
        .await;
    }
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0, "sinceSequence": 0 })).await;
    assert_eq!(ack["replay"]["gap"], false, "{}", ack["replay"]);
    for sequence in 1..=6 {
        let event = ws.expect("render_event").await;
        assert_eq!(event["sequence"], sequence);
        assert_eq!(event["actionData"]["note"], format!("{sequence}{note}"));
    }
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    for seq in 1..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq);
        if let Some(n) = seq.checked_sub(last - 6).filter(|n| *n > 0) {
            assert_eq!(frame["payload"], format!("{n}{text}"), "envelope {seq}");
        }
    }
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "live" }),
    )
    .await;
    let live = ws.expect("data").await;
    assert_eq!(
        (live["seq"].as_i64().unwrap(), &live["payload"]),
        (last + 1, &json!("live"))
    );
    ws.expect_silence(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_older_than_the_replay_buffer_is_reported_as_a_gap() {
    let app = TestApp::spawn_configured("replay_gap", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.live.replay_buffer = 2
    })
    .await
    .unwrap();
    let (session, slice) = card(&app).await;
    for n in 0..5 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("l{n}") }),
        )
        .await;
    }
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0 })).await;
    assert_eq!(ack["replay"]["gap"], true);
    assert_eq!(ack["replay"]["lost"], json!(["streams"]), "{}", ack["replay"]);
    let system = ws.expect("system").await;
    assert_eq!(system["event"], "replay_gap");
    assert_eq!(
        system["lost"],
        json!(["streams"]),
        "the card rebuilds its streams: {system}"
    );
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    assert_eq!(
        ws.expect("data").await["seq"].as_i64().unwrap(),
        last - 1,
        "the newest buffered envelopes follow"
    );
    assert_eq!(ws.expect("data").await["seq"].as_i64().unwrap(), last);
    ws.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_cursor_older_than_the_buffer_replays_the_newest_actions() {
    let app = TestApp::spawn_configured("action_gap", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.live.replay_buffer = 2
    })
    .await
    .unwrap();
    let (session, slice) = card(&app).await;
    let (mut first, first_ack) = subscribed(&app, &slice, json!({})).await;
    let streams_seen = first_ack["lastStreamSeq"].as_i64().unwrap();
    for n in 1..=4 {
        first
            .send(
                "action",
                action(&session, "approve", json!({ "note": format!("n{n}") }), n),
            )
            .await;
        first.expect("system").await;
    }
    // Every stream envelope is within reach of its cursor: only actions were lost, and a card
    // keeps its streams (docs/live-channel.md, `lost`).
    let cursors = json!({ "sinceSequence": 0, "fromSeq": streams_seen });
    let (mut ws, ack) = subscribed(&app, &slice, cursors).await;
    assert_eq!(ack["replay"]["gap"], true);
    assert_eq!(ack["replay"]["lost"], json!(["actions"]), "{}", ack["replay"]);
    let system = ws.expect("system").await;
    assert_eq!(system["event"], "replay_gap");
    assert_eq!(system["lost"], json!(["actions"]), "{system}");
    let replayed: Vec<i64> = [ws.expect("render_event").await, ws.expect("render_event").await]
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(replayed, [3, 4], "the newest actions, never losing the latest");

    // The polling fallback says the same.
    let polled = poll(&app, &slice, &format!("wait=0&sinceSequence=0&fromSeq={streams_seen}")).await;
    let frames = polled["frames"].as_array().unwrap();
    assert_eq!(frames[0]["payload"]["replay"]["lost"], json!(["actions"]), "{polled}");
    let gap = frames
        .iter()
        .find(|f| f["type"] == "system")
        .expect("a replay_gap frame");
    assert_eq!(gap["payload"]["event"], "replay_gap");
    assert_eq!(gap["payload"]["lost"], json!(["actions"]), "{gap}");
}
