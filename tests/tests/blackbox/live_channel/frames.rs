//! Frames the socket cannot take: garbage and oversized ones are answered, not fatal; a peer that
//! stops reading is dropped.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{card, subscribed};

on_every_backend!(Auth::DevAllowAll => garbage_and_oversized_frames_are_answered_not_fatal);

async fn garbage_and_oversized_frames_are_answered_not_fatal(app: TestApp) {
    let (_, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send_raw("not json".into()).await;
    assert_eq!(ws.expect("error").await["code"], "BAD_FRAME");
    ws.send("teleport", json!({})).await;
    assert_eq!(ws.expect("error").await["code"], "BAD_FRAME");
    ws.send("ping", Value::Null).await;
    ws.expect("pong").await;
    ws.send_raw(format!(
        "{{\"type\":\"ping\",\"payload\":\"{}\"}}",
        "x".repeat(300 * 1024)
    ))
    .await;
    assert_eq!(ws.expect("error").await["code"], "FRAME_TOO_LARGE");
    assert_eq!(ws.recv().await["payload"], 1009, "then closed with 1009");
    // Past the transport's cap (1 MiB) the message is refused from its header, the same way.
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send_raw(format!(
        "{{\"type\":\"ping\",\"payload\":\"{}\"}}",
        "x".repeat(1536 * 1024)
    ))
    .await;
    assert_eq!(ws.expect("error").await["code"], "FRAME_TOO_LARGE");
    assert_eq!(ws.recv().await["payload"], 1009, "then closed with 1009");
    // The server is fine.
    let (_, again) = subscribed(&app, &slice, json!({})).await;
    assert_eq!(again["epoch"], 1);
}

/// A card that stops reading fills its socket's buffers; the server gives up on a frame it could
/// not write within 30 s and drops the socket, instead of holding it (and what it was sent) for
/// good. Slow by nature: about 35 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_whose_peer_stops_reading_is_dropped() {
    let app = TestApp::spawn("stalled_reader", svc_tests::Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    // Far more than loopback's socket buffers hold, while the card reads nothing.
    let emitted = 32;
    let text = "p".repeat(1_000_000);
    for _ in 0..emitted {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": text }),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(33)).await;
    let mut received = 0;
    let ended = loop {
        match ws.next_or_why(Duration::from_secs(10)).await {
            Ok(frame) if frame["type"] == "data" => received += 1,
            Ok(frame) if frame["type"] == "_closed" => break "closed".to_owned(),
            Ok(_) => {}
            Err(why) => break why,
        }
    };
    assert!(
        !ended.starts_with("nothing within"),
        "the socket was held open: {ended}"
    );
    assert!(
        received < emitted,
        "{received} of {emitted} frames came: the writer never gave up"
    );
}
