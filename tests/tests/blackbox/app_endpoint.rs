//! Per-app endpoints `/apps/<appId>/mcp` (Document 1, "Endpoint-level refusal"): scoping to the
//! app, the strict `app_deprovisioned` refusal of a deleted or unknown app on every request
//! (including `initialize`), the bare 403 of a caller bound elsewhere (before any lookup) and the
//! 401 of an anonymous one. On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::{Client, Tenants, app_with_prompt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    an_app_endpoint_serves_that_app_only,
    a_deleted_app_is_refused_on_every_request,
    an_unknown_app_is_refused_like_a_deleted_one,
    anonymous_and_unknown_bearers_are_401,
    a_key_locked_to_another_app_gets_a_bare_403_before_any_lookup,
    get_and_delete_are_checked_then_405,
    a_key_locked_to_a_deleted_app_is_refused_on_mcp_and_ops,
);

with_tenants!(another_tenants_live_app_is_a_bare_403_and_its_deleted_app_the_refusal);

fn endpoint(app_id: &Value) -> String {
    format!("/apps/{}/mcp", app_id.as_str().unwrap())
}

fn card_contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": {},
    })
}

/// Renders a card through `path`; its sessionId.
async fn render_through(client: &Client, path: &str) -> String {
    let call = |tool: &'static str, arguments: Value| {
        let client = client.clone();
        let path = path.to_owned();
        async move {
            let (status, _, body) = client
                .post(&path, "tools/call", json!({ "name": tool, "arguments": arguments }))
                .await;
            assert_eq!(status, StatusCode::OK, "{tool}: {body}");
            assert!(body["result"].get("isError").is_none(), "{tool}: {body}");
            body["result"]["structuredContent"].clone()
        }
    };
    let handshake = call(
        "svc_handshake",
        json!({ "intent": "show a title", "blueprintDraft": { "contract": card_contract() } }),
    )
    .await;
    let rendered = call(
        "svc_render",
        json!({ "handshakeId": handshake["handshakeId"], "props": { "title": "hello" } }),
    )
    .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    rendered["sessionId"].as_str().unwrap().to_owned()
}

async fn session_ids(client: &Client, path: &str) -> Vec<String> {
    let (status, _, body) = client
        .post(
            path,
            "tools/call",
            json!({ "name": "svc_list_sessions", "arguments": {} }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["structuredContent"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts the strict endpoint-level refusal for `app_id`, answered to request id 7.
fn assert_deprovisioned(status: StatusCode, body: &Value, app_id: &Value) {
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["id"], 7, "the refusal answers the request: {body}");
    let error = &body["error"];
    assert_eq!(error["code"], -32003, "{body}");
    assert_eq!(error["message"], "App not found");
    let data = error["data"].as_object().expect("data");
    assert_eq!(data.keys().collect::<Vec<_>>(), ["refusal"], "data is strict: {body}");
    let refusal = data["refusal"].as_object().expect("refusal");
    let mut keys: Vec<_> = refusal.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["appId", "code", "fix", "message", "retry"],
        "no fixBy, nothing else: {body}"
    );
    assert_eq!(refusal["code"], "app_deprovisioned");
    assert_eq!(refusal["retry"], "never");
    assert_eq!(&refusal["appId"], app_id);
    for text in ["message", "fix"] {
        assert!(refusal[text].as_str().is_some_and(|t| !t.is_empty()), "{text}: {body}");
    }
}

fn assert_bare(status: StatusCode, body: &Value, expected: StatusCode) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["error"]["code"], -32007, "{body}");
    assert!(
        body["error"].get("data").is_none(),
        "a bare denial carries no data: {body}"
    );
}

async fn an_app_endpoint_serves_that_app_only(app: TestApp) {
    let ops = Client::of(&app);
    let prompt = "Always answer in haiku.";
    let app_id = app_with_prompt(&ops, "Haiku desk", prompt).await;
    let path = endpoint(&app_id);

    let (status, _, init) = ops
        .post(&path, "initialize", json!({ "protocolVersion": "2025-06-18" }))
        .await;
    assert_eq!(status, StatusCode::OK, "{init}");
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.ends_with(prompt), "the app's prompt: {instructions}");
    assert!(
        !ops.mcp_instructions().await.contains(prompt),
        "/mcp stays on the default app"
    );

    let session = render_through(&ops, &path).await;
    assert_eq!(session_ids(&ops, &path).await, [session.as_str()]);
    assert!(
        !session_ids(&ops, "/mcp").await.contains(&session),
        "the render belongs to the endpoint's app, not the default one"
    );
}

async fn a_deleted_app_is_refused_on_every_request(app: TestApp) {
    let ops = Client::of(&app);
    let app_id = app_with_prompt(&ops, "Short lived", "x").await;
    let path = endpoint(&app_id);
    let (status, _, _) = ops.post(&path, "ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    ops.ok("svc_ops_delete_app", json!({ "appId": app_id })).await;
    for (method, params) in [
        ("initialize", json!({ "protocolVersion": "2025-06-18" })),
        ("tools/list", json!({})),
        ("tools/call", json!({ "name": "svc_list_sessions", "arguments": {} })),
        ("no/such-method", json!({})),
    ] {
        let (status, _, body) = ops.post(&path, method, params).await;
        assert_deprovisioned(status, &body, &app_id);
    }
    let (status, _) = ops.mcp("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK, "the universal endpoint is unaffected");
}

async fn an_unknown_app_is_refused_like_a_deleted_one(app: TestApp) {
    let ops = Client::of(&app);
    let never = json!("NoSuchApp0000000");
    let (status, _, body) = ops.post(&endpoint(&never), "initialize", json!({})).await;
    assert_deprovisioned(status, &body, &never);
}

async fn anonymous_and_unknown_bearers_are_401(app: TestApp) {
    let ops = Client::of(&app);
    let app_id = app_with_prompt(&ops, "Guarded", "x").await;
    let path = endpoint(&app_id);
    for client in [
        Client::anonymous(&app),
        Client::with_bearer(&app, "svc_user_not-a-key-of-this-server"),
    ] {
        let (status, headers, body) = client.post(&path, "initialize", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], -32007, "{body}");
        let challenge = headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer "), "{challenge}");
    }
    // Anonymous on an unknown app is still 401: nothing is looked up for a stranger.
    let (status, _, _) = Client::anonymous(&app)
        .post(&endpoint(&json!("NoSuchApp0000000")), "initialize", json!({}))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

async fn a_key_locked_to_another_app_gets_a_bare_403_before_any_lookup(app: TestApp) {
    let ops = Client::of(&app);
    let home = app_with_prompt(&ops, "Home", "x").await;
    let elsewhere = app_with_prompt(&ops, "Elsewhere", "y").await;
    let issued = ops.ok("svc_ops_issue_connector_key", json!({ "appId": home })).await;
    let locked = Client::with_bearer(&app, issued["plaintextKey"].as_str().unwrap());

    let (status, _, body) = locked.post(&endpoint(&home), "initialize", json!({})).await;
    assert_eq!(status, StatusCode::OK, "bound to its own app: {body}");

    let (status, _, body) = locked.post(&endpoint(&elsewhere), "initialize", json!({})).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN);
    // Not even a deprovisioned app is looked up for a caller bound elsewhere.
    ops.ok("svc_ops_delete_app", json!({ "appId": elsewhere })).await;
    let (status, _, body) = locked.post(&endpoint(&elsewhere), "initialize", json!({})).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN);
    let (status, _, body) = locked
        .post(&endpoint(&json!("NoSuchApp0000000")), "initialize", json!({}))
        .await;
    assert_bare(status, &body, StatusCode::FORBIDDEN);
}

async fn get_and_delete_are_checked_then_405(app: TestApp) {
    let ops = Client::of(&app);
    let app_id = app_with_prompt(&ops, "Streams", "x").await;
    let url = format!("{}{}", app.base, endpoint(&app_id));
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let anonymous = app.client.request(method.clone(), &url).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
        let allowed = app
            .client
            .request(method, &url)
            .bearer_auth(&app.bearer)
            .send()
            .await
            .unwrap();
        assert_eq!(allowed.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(allowed.headers()["allow"], "POST");
    }
}

async fn another_tenants_live_app_is_a_bare_403_and_its_deleted_app_the_refusal(t: Tenants) {
    let app_id = app_with_prompt(&t.owner, "Owner's", "x").await;
    let path = endpoint(&app_id);
    let (status, _, body) = t.other.post(&path, "initialize", json!({})).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN);
    let (status, _, body) = t
        .other
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_list_sessions", "arguments": {} }),
        )
        .await;
    assert_bare(status, &body, StatusCode::FORBIDDEN);

    t.owner.ok("svc_ops_delete_app", json!({ "appId": app_id })).await;
    // Deprovisioning is answered before the caller's own standing on the app is read.
    let (status, _, body) = t.other.post(&path, "initialize", json!({})).await;
    assert_deprovisioned(status, &body, &app_id);
}

async fn a_key_locked_to_a_deleted_app_is_refused_on_mcp_and_ops(app: TestApp) {
    let ops = Client::of(&app);
    let doomed = app_with_prompt(&ops, "Doomed", "x").await;
    let issued = ops.ok("svc_ops_issue_connector_key", json!({ "appId": doomed })).await;
    let locked = Client::with_bearer(&app, issued["plaintextKey"].as_str().unwrap());
    let (status, _) = locked.mcp("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    ops.ok("svc_ops_delete_app", json!({ "appId": doomed })).await;
    for path in ["/mcp", "/ops"] {
        let (status, _, body) = locked.post(path, "initialize", json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert_eq!(body["error"]["code"], -32003, "{path}: {body}");
        assert_eq!(body["id"], 7, "the refusal answers the request: {body}");
        assert_eq!(body["error"]["data"]["refusal"]["code"], "app_deprovisioned");
        assert_eq!(body["error"]["data"]["refusal"]["appId"], doomed);
    }
    let (status, _, body) = locked.post(&endpoint(&doomed), "initialize", json!({})).await;
    assert_deprovisioned(status, &body, &doomed);
}
