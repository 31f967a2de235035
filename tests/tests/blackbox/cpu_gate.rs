//! The gate of CPU-heavy work (`[limits]`, docs/budgets.md): with one slot and a short wait, a
//! props validation in flight holds the slot and the renders that come while it runs are refused
//! with -32014 `SERVER_BUSY` over HTTP 503 with `Retry-After`; `/healthz` answers throughout, and
//! once the heavy work is done the next render gets the slot.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

/// Renders sent at once: all but the first to reach the gate find its one slot taken.
const CONCURRENT_RENDERS: usize = 4;

/// Each level of `tree` doubles the validation's work (each `allOf` branch steps into `a` and
/// `$ref`s the node again): 16 levels is within the `validation_work` budget (17 is over it and
/// refused unvalidated) and hundreds of thousands of steps, so it holds the slot far longer than
/// the 1 ms wait. (15 levels were too quick on a fast machine: the handshakes sent meanwhile
/// could all miss the slot's holding.)
const DEPTH: usize = 16;

fn doubling_contract() -> Value {
    json!({ "propsSpec": {
        "type": "object",
        "properties": { "tree": { "$ref": "#/$defs/n" } },
        "$defs": { "n": { "allOf": [
            { "properties": { "a": { "$ref": "#/$defs/n" } } },
            { "properties": { "a": { "$ref": "#/$defs/n" } } } ] } }
    } })
}

/// The doubling contract, its text made unique by a description.
fn new_draft(n: usize) -> Value {
    let mut draft = doubling_contract();
    draft["propsSpec"]["description"] = json!(format!("draft {n}"));
    draft
}

fn deep_props(depth: usize) -> Value {
    json!({ "tree": (0..depth).fold(json!(1), |inner, _| json!({ "a": inner })) })
}

pub(super) async fn one_slot_server(test: &str) -> TestApp {
    TestApp::spawn_configured(test, Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.limits.cpu_heavy_concurrency = 1;
        s.limits.cpu_heavy_wait_ms = 1;
    })
    .await
    .expect("SQLite is always available")
}

async fn handshake(app: &TestApp) -> Value {
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": "gated card", "blueprintDraft": { "contract": doubling_contract() } }),
    )
    .await["handshakeId"]
        .clone()
}

/// `svc_render` sent raw: status, `Retry-After` and body.
async fn render(app: &TestApp, handshake_id: &Value, props: Value) -> (StatusCode, Option<String>, Value) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": props } } });
    let (status, headers, json) = app.post_raw(Some(&app.bearer), body.to_string()).await;
    let retry_after = headers
        .get("retry-after")
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    (status, retry_after, json)
}

async fn healthy(app: &TestApp) {
    let resp = app
        .client
        .get(format!("{}/healthz", app.base))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .expect("/healthz answers within a second");
    assert!(resp.status().is_success(), "{}", resp.status());
}

#[tokio::test]
async fn heavy_renders_beyond_the_one_slot_are_refused_server_busy_and_health_answers() {
    let app = one_slot_server("cpu_gate_busy").await;
    let mut handshakes = Vec::new();
    for _ in 0..CONCURRENT_RENDERS {
        handshakes.push(handshake(&app).await);
    }
    let renders = futures_util::future::join_all(handshakes.iter().map(|id| render(&app, id, deep_props(DEPTH))));
    let probes = async {
        for _ in 0..5 {
            healthy(&app).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (answers, ()) = tokio::join!(renders, probes);

    let (refused, served): (Vec<_>, Vec<_>) = answers
        .into_iter()
        .partition(|(status, _, _)| *status == StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        !refused.is_empty(),
        "one slot cannot serve {CONCURRENT_RENDERS} heavy renders at once"
    );
    assert!(!served.is_empty(), "the render holding the slot is answered");
    for (_, retry_after, body) in &refused {
        assert_eq!(
            retry_after.as_deref(),
            Some("1"),
            "1 ms of wait rounds up to 1 s: {body}"
        );
        let error = &body["error"];
        assert_eq!(error["code"], -32014, "{body}");
        assert_eq!(
            error["message"], "Server busy with other heavy work; retry later",
            "{body}"
        );
        assert_eq!(
            error["data"],
            json!({ "code": "SERVER_BUSY", "retryAfterSeconds": 1 }),
            "{body}"
        );
    }
    for (status, _, body) in &served {
        assert_eq!(*status, StatusCode::OK, "{body}");
        assert!(body["result"]["structuredContent"]["sessionId"].is_string(), "{body}");
    }
    healthy(&app).await;

    // The slot is free again: the next render is served.
    let fresh = handshake(&app).await;
    let (status, _, body) = render(&app, &fresh, deep_props(3)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["structuredContent"]["sessionId"].is_string(), "{body}");
}

#[tokio::test]
async fn handshakes_while_a_heavy_validation_runs_are_refused_server_busy() {
    let app = one_slot_server("cpu_gate_handshake").await;
    let id = handshake(&app).await;
    // A heavy validation in flight and, until it is answered, one handshake after another
    // (negotiation is gated too): whichever comes while the other holds the slot is refused.
    // Each draft is new (a draft agreed before is answered from memory, with no work to gate).
    let heavy = render(&app, &id, deep_props(DEPTH));
    tokio::pin!(heavy);
    let mut drafts = Vec::new();
    let heavy_status = loop {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "svc_handshake",
            "arguments": { "intent": format!("card {}", drafts.len()), "blueprintDraft": { "contract": new_draft(drafts.len()) } } } });
        tokio::select! {
            (status, _, _) = &mut heavy => break status,
            answer = app.post_raw(Some(&app.bearer), body.to_string()) => drafts.push(answer),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let refused: Vec<_> = drafts
        .iter()
        .filter(|(status, _, _)| *status == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert!(
        !refused.is_empty() || heavy_status == StatusCode::SERVICE_UNAVAILABLE,
        "the heavy render ({heavy_status}) and {} negotiations sent while it ran cannot share one slot",
        drafts.len()
    );
    for (_, headers, body) in &refused {
        assert_eq!(headers.get("retry-after").unwrap(), "1", "{body}");
        assert_eq!(body["error"]["code"], -32014, "{body}");
        assert_eq!(body["error"]["data"]["code"], "SERVER_BUSY", "{body}");
    }
    healthy(&app).await;
}
