//! Document 1, "Endpoint-level refusal": any JSON-RPC request to a deprovisioned app answers
//! HTTP 403 -32003, so the app is checked before anything else about the request, a
//! `MCP-Protocol-Version` this server does not speak included (on a live app that is still a 400).

use crate::ops_support;

use ops_support::{Client, app_with_prompt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    a_deprovisioned_app_is_refused_whatever_protocol_version_is_asked,
);

/// `initialize` to `path` as `client`, with an `MCP-Protocol-Version` no server speaks.
async fn initialize_with_unknown_version(client: &Client, path: &str) -> (StatusCode, Value) {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {} });
    let response = client
        .client
        .post(format!("{}{path}", client.base))
        .bearer_auth(client.bearer.as_deref().unwrap())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "1999-01-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

fn assert_deprovisioned(status: StatusCode, body: &Value, app_id: &Value) {
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], -32003, "{body}");
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["error"]["data"]["refusal"]["code"], "app_deprovisioned");
    assert_eq!(&body["error"]["data"]["refusal"]["appId"], app_id);
}

async fn a_deprovisioned_app_is_refused_whatever_protocol_version_is_asked(app: TestApp) {
    let ops = Client::of(&app);
    let app_id = app_with_prompt(&ops, "Doomed", "x").await;
    let path = format!("/apps/{}/mcp", app_id.as_str().unwrap());
    let issued = ops.ok("svc_ops_issue_connector_key", json!({ "appId": app_id })).await;
    let locked = Client::with_bearer(&app, issued["plaintextKey"].as_str().unwrap());

    // While the app lives, the unknown version is the answer.
    let (status, body) = initialize_with_unknown_version(&ops, &path).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");

    ops.ok("svc_ops_delete_app", json!({ "appId": app_id })).await;
    let (status, body) = initialize_with_unknown_version(&ops, &path).await;
    assert_deprovisioned(status, &body, &app_id);
    // A key bound to the deleted app, on either endpoint, and on the operator route.
    for path in [path.as_str(), "/mcp", "/ops"] {
        let (status, body) = initialize_with_unknown_version(&locked, path).await;
        assert_deprovisioned(status, &body, &app_id);
    }
}
