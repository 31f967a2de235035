//! No credential reaches the log, at any level: a server run with `RUST_LOG=trace` is sent a
//! bearer, a wsToken, a session token and a polling token, and none of them appears in its log,
//! even when `RUST_LOG` names the WebSocket library itself.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const BEARER: &str = "bearer-that-must-never-be-logged-7f3a9c";

async fn call(client: &reqwest::Client, base: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let resp = client
        .post(format!("{base}/mcp"))
        .bearer_auth(BEARER)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_reaches_a_trace_level_log() {
    let dir = temp_dir("svc-token-log");
    let log = dir.join("stderr.log");
    let server = ServerProcess::start_logging(
        BINARY,
        &dir.join("data"),
        &["--dev-allow-all"],
        "trace,tungstenite=trace",
        &log,
    );
    let client = reqwest::Client::new();

    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "actionSpec": { "ping": {} },
    });
    let hs = call(
        &client,
        &server.base,
        "svc_handshake",
        json!({ "intent": "log card", "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let rendered = call(
        &client,
        &server.base,
        "svc_render",
        json!({ "handshakeId": hs["result"]["structuredContent"]["handshakeId"], "props": { "title": "t" } }),
    )
    .await;
    let slice = rendered["result"]["_meta"]["ai.svc/render"].clone();
    let ws_token = slice["wsToken"].as_str().expect("a wsToken").to_owned();

    let mut ws = LiveClient::connect(&server.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": slice["sessionId"], "wsToken": ws_token }),
    )
    .await;
    let ack = ws.expect("ack").await;
    let session_token = ack["sessionToken"].as_str().expect("a session token").to_owned();
    ws.send(
        "action",
        json!({ "sessionId": slice["sessionId"], "type": "data:submit", "payload": { "action": "ping" }, "clientSeq": 1 }),
    )
    .await;
    ws.expect("system").await;
    let mut again = LiveClient::connect(&server.base).await;
    again
        .send(
            "subscribe",
            json!({ "sessionId": slice["sessionId"], "sessionToken": session_token }),
        )
        .await;
    again.expect("ack").await;
    let polling_url = slice["pollingUrl"].as_str().expect("a pollingUrl");
    let polled = client
        .get(format!("{polling_url}?token={session_token}&wait=0"))
        .send()
        .await
        .unwrap();
    assert!(polled.status().is_success(), "{}", polled.status());

    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("server started"),
        "the log was captured: {} bytes",
        text.len()
    );
    for (what, secret) in [
        ("bearer", BEARER),
        ("wsToken", &ws_token),
        ("session token", &session_token),
    ] {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(secret)).take(3).collect();
        assert!(lines.is_empty(), "the {what} is in the log: {lines:#?}");
    }
}
