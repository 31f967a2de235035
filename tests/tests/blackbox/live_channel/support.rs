//! The card the scenarios mount, its subscription, the action frames it sends, and the polling
//! fallback's requests.

use serde_json::{Value, json};
use svc_tests::TestApp;
use svc_tests::live::LiveClient;

pub fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": {
            "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } }, "required": ["note"] } },
            "ping": {}
        },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } },
        "contextSpec": { "tab": { "schema": { "enum": ["summary", "lines"] }, "default": "summary" } }
    })
}

/// Renders a card; returns (sessionId, the `_meta['ai.svc/render']` slice).
pub async fn card(app: &TestApp) -> (String, Value) {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "live card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    (slice["sessionId"].as_str().unwrap().to_owned(), slice)
}

pub async fn subscribed(app: &TestApp, slice: &Value, extra: Value) -> (LiveClient, Value) {
    let mut ws = LiveClient::connect(&app.base).await;
    let mut payload = json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] });
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    ws.send("subscribe", payload).await;
    let ack = ws.expect("ack").await;
    (ws, ack)
}

pub fn action(session: &str, intent: &str, data: Value, client_seq: i64) -> Value {
    json!({ "sessionId": session, "type": "data:submit", "payload": { "action": intent, "data": data }, "clientSeq": client_seq, "uiContext": { "tab": "lines" } })
}

pub fn polling_url(slice: &Value, query: &str) -> String {
    format!(
        "{}?token={}&{query}",
        slice["pollingUrl"].as_str().unwrap(),
        slice["wsToken"].as_str().unwrap()
    )
}

pub async fn poll(app: &TestApp, slice: &Value, query: &str) -> Value {
    let resp = app.client.get(polling_url(slice, query)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}
