//! No credential reaches the log, at any level: a strict server run with `RUST_LOG=trace` is sent
//! a minted bearer, a refused bearer, a wsToken, a session token and a polling token, and reveals
//! a key issued on `/ops`; none of them appears in its log, even when `RUST_LOG` names the
//! WebSocket library itself.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const REFUSED_BEARER: &str = "svc_user_bearer-that-must-never-be-logged-7f3a9c";

/// `svc keys mint` into `data_dir`: the key is the last line of stdout.
fn mint_key(data_dir: &std::path::Path) -> String {
    let out = std::process::Command::new(BINARY)
        .args(["keys", "mint", "--data-dir"])
        .arg(data_dir)
        .output()
        .expect("svc keys mint");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout.lines().last().expect("a key").trim().to_owned()
}

async fn call(client: &reqwest::Client, base: &str, tool: &str, arguments: Value, bearer: &str) -> Value {
    call_at(client, &format!("{base}/mcp"), tool, arguments, bearer).await
}

async fn call_at(client: &reqwest::Client, url: &str, tool: &str, arguments: Value, bearer: &str) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let resp = client
        .post(url)
        .bearer_auth(bearer)
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
    let data_dir = dir.join("data");
    let bearer = mint_key(&data_dir);
    let server = ServerProcess::start_logging(BINARY, &data_dir, &[], "trace,tungstenite=trace", &log);
    let client = reqwest::Client::new();

    let refused = call(&client, &server.base, "svc_list_sessions", json!({}), REFUSED_BEARER).await;
    assert!(
        refused.get("result").is_none(),
        "a bearer nobody minted is refused: {refused}"
    );
    let issued = call_at(
        &client,
        &format!("{}/ops", server.base),
        "svc_ops_issue_connector_key",
        json!({ "name": "revealed once" }),
        &bearer,
    )
    .await;
    let revealed = issued["result"]["structuredContent"]["plaintextKey"]
        .as_str()
        .unwrap_or_else(|| panic!("a key issued on /ops: {issued}"))
        .to_owned();

    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "actionSpec": { "ping": {} },
    });
    let hs = call(
        &client,
        &server.base,
        "svc_handshake",
        json!({ "intent": "log card", "blueprintDraft": { "contract": contract } }),
        &bearer,
    )
    .await;
    let rendered = call(
        &client,
        &server.base,
        "svc_render",
        json!({ "handshakeId": hs["result"]["structuredContent"]["handshakeId"], "props": { "title": "t" } }),
        &bearer,
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
        ("minted bearer", bearer.as_str()),
        ("refused bearer", REFUSED_BEARER),
        ("key revealed on /ops", revealed.as_str()),
        ("wsToken", &ws_token),
        ("session token", &session_token),
    ] {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(secret)).take(3).collect();
        assert!(lines.is_empty(), "the {what} is in the log: {lines:#?}");
    }
}
