//! `[connections] parsed_json_mib_in_flight` on the live channel: a polling POST and a `/ws` text
//! frame are weighed from their text before they are parsed, and twice their parsed weight held
//! from the budget of `/mcp` and `/ops` while they are answered. A frame that does not fit beside
//! what others hold is refused in the words of its transport (503 `SERVER_BUSY` with
//! `Retry-After: 1`; an `error` frame `SERVER_BUSY` with `retryAfterSeconds`, the socket kept) and
//! taken once the budget is free; one heavier than the whole budget is refused like an oversized
//! frame (413; `FRAME_TOO_LARGE` and the 1009 close).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};
use tokio::task::JoinHandle;

use crate::live_channel::support::{action, card, polling_url, subscribed};

/// A 2 MiB budget: a frame padded with 8192 zeros weighs about 576 KiB parsed and holds twice
/// that; one padded with 20000 zeros holds more than the whole budget.
async fn spawn(test: &str) -> TestApp {
    TestApp::spawn_configured(test, Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.connections.parsed_json_mib_in_flight = 2;
    })
    .await
    .expect("SQLite is always available")
}

/// `[0,0,...]` of `len` zeros.
fn zeros(len: usize) -> String {
    format!("[{}0]", "0,".repeat(len - 1))
}

/// An `approve` action frame with `pad` zeros in a member the server never reads: weighed (and
/// parsed) with the frame all the same.
fn padded_action(session: &str, client_seq: i64, pad: usize) -> String {
    let payload = action(session, "approve", json!({ "note": "ok" }), client_seq);
    format!(r#"{{"type":"action","payload":{payload},"pad":{}}}"#, zeros(pad))
}

/// A `svc_consume` that waits 25 s holding 1152 KiB of the budget, until the task is aborted.
async fn hold_the_budget(app: &TestApp, session: &str) -> JoinHandle<()> {
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"svc_consume","arguments":{{"sessionId":"{session}","timeout":25}},"_meta":{{"pad":{}}}}}}}"#,
        zeros(8192)
    );
    let (base, bearer) = (app.base.clone(), app.bearer.clone());
    let (head, headed) = tokio::sync::oneshot::channel();
    let held = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(format!("{base}/mcp"))
            .bearer_auth(bearer)
            .header("content-type", "application/json")
            .body(message)
            .send()
            .await
            .unwrap();
        let _ = head.send(response.status());
        let _ = response.text().await;
    });
    assert_eq!(headed.await.unwrap(), StatusCode::OK, "the long-poll holds its weight");
    held
}

async fn post(app: &TestApp, url: &str, body: String) -> (StatusCode, Option<String>, Value) {
    let response = app
        .client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    (
        status,
        retry_after,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn live_frames_are_refused_while_the_budget_is_taken_and_taken_once_it_is_free() {
    let app = spawn("live_parsed_budget_busy").await;
    let (session, slice) = card(&app).await;
    let url = polling_url(&slice, "");
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    let held = hold_the_budget(&app, &session).await;

    ws.send_raw(padded_action(&session, 2, 8192)).await;
    assert_eq!(
        ws.expect("error").await,
        json!({ "code": "SERVER_BUSY", "clientSeq": 2, "retryAfterSeconds": 1, "message":
            "the server is holding as many parsed frames as it has memory for; send it again in a second" }),
    );

    let (status, retry_after, body) = post(&app, &url, padded_action(&session, 1, 8192)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_eq!(
        body,
        json!({ "error": { "code": "SERVER_BUSY", "message":
            "the server is holding as many parsed requests as it has memory for; retry shortly" } })
    );
    // The socket stays open, and light frames still fit.
    ws.send("ping", Value::Null).await;
    ws.expect("pong").await;
    let (status, _, body) = post(&app, &url, json!({ "type": "ping" }).to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The long-poll's client hangs up: its weight is given back, and the same frames are taken.
    held.abort();
    let mut answer = None;
    for _ in 0..50 {
        let (status, _, body) = post(&app, &url, padded_action(&session, 1, 8192)).await;
        if status != StatusCode::SERVICE_UNAVAILABLE {
            answer = Some((status, body));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body) = answer.expect("taken once the held answer was dropped");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["frames"][0]["type"], "system", "{body}");
    assert_eq!(body["frames"][0]["payload"]["event"], "action_stored", "{body}");
    assert_eq!(body["frames"][0]["payload"]["clientSeq"], 1, "{body}");

    ws.send_raw(padded_action(&session, 2, 8192)).await;
    let stored = ws.expect("system").await;
    assert_eq!(
        (&stored["event"], &stored["clientSeq"]),
        (&json!("action_stored"), &json!(2)),
        "{stored}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_frame_heavier_parsed_than_the_whole_budget_is_refused_as_too_large() {
    let app = spawn("live_parsed_budget_whole").await;
    let (session, slice) = card(&app).await;
    let heavy = padded_action(&session, 1, 20_000);
    assert!(heavy.len() < 64 * 1024, "well under the 256 KiB of a frame");

    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send_raw(heavy.clone()).await;
    assert_eq!(
        ws.expect("error").await,
        json!({ "code": "FRAME_TOO_LARGE", "message":
            "the frame would take more than the server's 2 MiB for parsed frames once parsed" }),
    );
    assert_eq!(ws.recv().await["payload"], 1009, "then closed with 1009");

    let (status, _, body) = post(&app, &polling_url(&slice, ""), heavy).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(
        body,
        json!({ "error": { "code": "PAYLOAD_TOO_LARGE", "message":
            "the request body would take more than the server's 2 MiB for parsed requests once parsed" } })
    );
    // Nothing was stored, and the channel is fine.
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send("action", action(&session, "approve", json!({ "note": "ok" }), 1))
        .await;
    assert_eq!(ws.expect("system").await["duplicate"], false);
}
