//! `[connections] parsed_json_mib_in_flight`: a `/mcp` or `/ops` message is weighed before it is
//! parsed, and twice its parsed weight held until its answer is sent. A small body can weigh
//! far more than its bytes (`[0,0,...]`: 2 bytes of text, 72 of parsed value, each): one heavier
//! than the whole budget is refused 413 at once, one heavier than what held answers leave is
//! refused 503 `SERVER_BUSY` until they end, and ordinary requests go on.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

/// A 2 MiB budget: a message of 8192 zeros weighs 576 KiB parsed and holds 1152 KiB of it.
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

async fn post(app: &TestApp, path: &str, body: String) -> (StatusCode, Option<String>, Value) {
    let response = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(&app.bearer)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_heavier_parsed_than_the_whole_budget_is_refused_before_it_is_parsed() {
    let app = spawn("parsed_json_budget_whole").await;
    // 40 KiB of text, 4.5 MiB held once parsed.
    let heavy = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"svc_handshake","arguments":{{"intent":{}}}}}}}"#,
        zeros(20_000)
    );
    assert!(heavy.len() < 64 * 1024);
    let refused = json!({ "error": { "code": "PAYLOAD_TOO_LARGE", "message":
        "the request body would take more than the server's 2 MiB for parsed requests once parsed" } });
    for path in ["/mcp", "/ops"] {
        let (status, _, body) = post(&app, path, heavy.clone()).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {body}");
        assert_eq!(body, refused, "{path}");
    }
    // The same zeros in a member the server reads and drops are never built: not weighed.
    let dropped = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","unread":{}}}"#,
        zeros(20_000)
    );
    let (status, _, body) = post(&app, "/mcp", dropped).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"], json!({}), "{body}");
    let (status, body) = app.rpc("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn held_answers_hold_their_weight_until_they_end() {
    let app = spawn("parsed_json_budget_held").await;
    let contract = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "go": {} } });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "parsed budget", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let rendered = app
        .call("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    let session = rendered["result"]["_meta"]["ai.svc/render"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("a render: {rendered}"))
        .to_owned();
    let consume = |timeout: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"svc_consume","arguments":{{"sessionId":"{session}","timeout":{timeout}}},"_meta":{{"pad":{}}}}}}}"#,
            zeros(8192)
        )
    };

    // A long-poll of 1152 KiB held: its answer is made in its body, which holds the weight. Its
    // head comes at once: from then on it holds its weight.
    let (base, bearer, waiting) = (app.base.clone(), app.bearer.clone(), consume(25));
    let (head, headed) = tokio::sync::oneshot::channel();
    let held = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(format!("{base}/mcp"))
            .bearer_auth(bearer)
            .header("content-type", "application/json")
            .body(waiting)
            .send()
            .await
            .unwrap();
        let _ = head.send(response.status());
        response.text().await
    });
    assert_eq!(headed.await.unwrap(), StatusCode::OK);
    // Another of the same weight does not fit beside it.
    let (status, retry_after, body) = post(&app, "/mcp", consume(0)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_eq!(
        body,
        json!({ "error": { "code": "SERVER_BUSY", "message":
            "the server is holding as many parsed requests as it has memory for; retry shortly" } })
    );
    assert!(!held.is_finished(), "the long-poll still waits");
    // A light request still fits.
    let (status, body) = app.rpc("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The client hangs up: the weight is given back with the answer it no longer reads.
    held.abort();
    let mut answer = None;
    for _ in 0..50 {
        let (status, _, body) = post(&app, "/mcp", consume(0)).await;
        if status != StatusCode::SERVICE_UNAVAILABLE {
            answer = Some((status, body));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body) = answer.expect("given back once the held answer was dropped");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["structuredContent"]["status"], "active", "{body}");
}
