//! Text the stores cannot hold, and names with control characters, are refused at the boundary
//! with the same answer on SQLite and PostgreSQL: -32602 naming the field on `/mcp` and `/ops`,
//! 422 `invalid_client_name` naming the field on `POST /_svc/pair`. Echoed input in error messages is truncated.

use crate::ops_support;

use ops_support::Client;
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    a_nul_in_agent_tool_text_is_invalid_params_naming_the_field,
    a_nul_in_ops_tool_text_is_invalid_params_naming_the_field,
    names_refuse_control_characters,
    a_nul_or_control_character_in_a_pair_client_name_is_422,
    error_messages_echo_at_most_a_short_prefix_of_the_input,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_in_a_url_or_an_oauth_form_is_400_sqlite() {
    a_nul_in_a_url_or_an_oauth_form_is_400(svc_tests::Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_in_a_url_or_an_oauth_form_is_400_postgres() {
    a_nul_in_a_url_or_an_oauth_form_is_400(svc_tests::Backend::Postgres).await;
}

const NUL_RULE: &str = "must not contain U+0000 (NUL)";

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } },
    })
}

fn assert_invalid(body: &Value, message: &str) {
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["message"], message, "{body}");
}

async fn a_nul_in_agent_tool_text_is_invalid_params_naming_the_field(app: TestApp) {
    let body = app
        .call(
            "svc_handshake",
            json!({ "intent": "order\u{0}approval", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    assert_invalid(&body, &format!("Invalid params: intent: {NUL_RULE}"));

    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "order approval", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let (status, body) = app
        .rpc(
            "tools/call",
            json!({
                "name": "svc_render",
                "arguments": { "handshakeId": hs["handshakeId"], "props": { "title": "x" } },
                "_meta": { "ai.svc/host-session": { "hostName": "claude\u{0}", "hostSessionId": "h1" } },
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_invalid(
        &body,
        &format!("Invalid params: _meta.ai.svc/host-session.hostName: {NUL_RULE}"),
    );
    // Nothing was half-done: the handshake still renders.
    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "x\u{1}" } }),
        )
        .await;
    assert_eq!(
        rendered["outcome"], "rendered",
        "other control characters are data: {rendered}"
    );
}

async fn a_nul_in_ops_tool_text_is_invalid_params_naming_the_field(app: TestApp) {
    let ops = Client::of(&app);
    let rows = [
        ("svc_ops_create_app", json!({ "displayName": "a\u{0}b" }), "displayName"),
        ("svc_ops_create_org", json!({ "name": "a\u{0}b" }), "name"),
        ("svc_ops_issue_connector_key", json!({ "name": "a\u{0}b" }), "name"),
        (
            "svc_ops_register_blueprint",
            json!({ "contract": contract(), "componentCode": "export default () => '\u{0}';" }),
            "componentCode",
        ),
        (
            "svc_ops_register_blueprint",
            json!({ "contract": contract(), "componentCode": "export default () => null;", "options": { "persona": "\u{0}" } }),
            "options.persona",
        ),
    ];
    for (tool, arguments, field) in rows {
        let body = ops.call(tool, arguments).await;
        assert_invalid(&body, &format!("Invalid params: {field}: {NUL_RULE}"));
    }
    let apps = ops.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(apps["apps"].as_array().unwrap().len(), 1, "nothing was stored: {apps}");
    assert_eq!(
        ops.ok("svc_ops_list_blueprints", json!({})).await,
        json!({ "blueprints": [] })
    );
}

async fn names_refuse_control_characters(app: TestApp) {
    let ops = Client::of(&app);
    let app_id = ops.ok("svc_ops_create_app", json!({ "displayName": "Shop" })).await["appId"].clone();
    let rule = "must not contain control characters";
    let rows = [
        (
            "svc_ops_create_app",
            json!({ "displayName": "bell\u{7}" }),
            "displayName",
        ),
        (
            "svc_ops_rename_app",
            json!({ "appId": app_id, "displayName": "line\nbreak" }),
            "displayName",
        ),
        ("svc_ops_create_org", json!({ "name": "esc\u{1b}[31m" }), "name"),
        ("svc_ops_issue_connector_key", json!({ "name": "del\u{7f}" }), "name"),
    ];
    for (tool, arguments, field) in rows {
        let message = ops.invalid(tool, arguments, field).await;
        assert!(message.contains(rule), "{tool}: {message}");
    }
    let names: Vec<Value> = ops.ok("svc_ops_list_apps", json!({})).await["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["displayName"].clone())
        .collect();
    assert_eq!(names, [json!("My app"), json!("Shop")]);
}

async fn pair(app: &TestApp, client_name: &str) -> (StatusCode, Value) {
    let resp = app
        .client
        .post(format!("{}/_svc/pair", app.base))
        .json(&json!({ "pairCode": app.pair_code.as_deref().unwrap(), "clientName": client_name }))
        .send()
        .await
        .unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

async fn a_nul_or_control_character_in_a_pair_client_name_is_422(app: TestApp) {
    for name in ["laptop\u{0}", "laptop\u{7}", &"x".repeat(121)] {
        let (status, body) = pair(&app, name).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "invalid_client_name", "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().starts_with("clientName: "),
            "{body}"
        );
    }
    let ops = Client::of(&app);
    let keys = ops.ok("svc_ops_list_connector_keys", json!({})).await;
    assert_eq!(keys, json!({ "keys": [] }), "no key was minted");
    let (status, body) = pair(&app, "laptop").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The longest excerpt of a caller's input an error message quotes, in characters.
const ECHO_LIMIT: usize = 200;

async fn error_messages_echo_at_most_a_short_prefix_of_the_input(app: TestApp) {
    let huge = "q".repeat(3 * 1024 * 1024);
    let probes = [
        ("svc_search_blueprints", json!({ "query": huge, "limit": 0 })),
        ("svc_handshake", json!({ "intent": huge, "blueprintDraft": 1 })),
        (huge.as_str(), json!({})),
    ];
    for (tool, arguments) in probes {
        let (status, body) = app
            .rpc("tools/call", json!({ "name": tool, "arguments": arguments }))
            .await;
        assert_eq!(status, StatusCode::OK);
        let message = body["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", &body.to_string()[..300]));
        assert!(
            message.chars().count() < ECHO_LIMIT + 200,
            "{} chars: {}",
            message.len(),
            &message[..300]
        );
    }
    // A subscribed socket's unknown frame type is quoted in its BAD_FRAME error.
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "echo card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let rendered = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    let slice = &rendered["result"]["_meta"]["ai.svc/render"];
    let mut ws = svc_tests::live::LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] }),
    )
    .await;
    ws.expect("ack").await;
    ws.send(&"t".repeat(200 * 1024), json!({})).await;
    let frame = ws.recv().await;
    assert_eq!(frame["payload"]["code"], "BAD_FRAME");
    let message = frame["payload"]["message"].as_str().unwrap();
    assert!(message.chars().count() < ECHO_LIMIT + 200, "{} chars", message.len());

    let ops = Client::of(&app);
    let body = ops
        .call(
            "svc_ops_update_blueprint",
            json!({ "blueprintId": huge, "isOperatorDefault": true }),
        )
        .await;
    let message = body["result"]["structuredContent"]["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", &body.to_string()[..300]));
    assert!(message.chars().count() < ECHO_LIMIT + 200, "{}", &message[..300]);
}

/// Ids in paths and query strings, and OAuth form fields, are looked up in text columns too: a
/// U+0000 in them is the caller's error (400), on both backends, never a 500.
async fn a_nul_in_a_url_or_an_oauth_form_is_400(backend: svc_tests::Backend) {
    let Some(app) = TestApp::spawn_configured("nul_urls", backend, Auth::Strict, |s| s.oauth.enabled = true).await
    else {
        return;
    };
    let url = |path: &str| format!("{}{path}", app.base);
    let verifier = "v".repeat(50);
    let challenge = "a".repeat(43);
    let requests = [
        app.client
            .post(url("/_svc/invites/a%00b/accept"))
            .bearer_auth(&app.bearer),
        app.client
            .post(url("/apps/a%00b/mcp"))
            .bearer_auth(&app.bearer)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" })),
        app.client.get(url("/_svc/poll/a%00b?token=x")),
        // Browser pages: an HTML page naming the rule.
        app.client.get(url("/account/verify?token=a%00b")),
        app.client.get(url("/oauth/oidc/callback?state=a%00b&code=c")),
        app.client.get(url(&format!(
            "/oauth/authorize?response_type=code&client_id=a%00b&redirect_uri=http://127.0.0.1/cb&code_challenge={challenge}&code_challenge_method=S256"
        ))),
        app.client
            .post(url("/oauth/token"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=authorization_code&code=x&redirect_uri=http://127.0.0.1/cb&client_id=a%00b&code_verifier={verifier}"
            )),
        app.client
            .post(url("/oauth/authorize"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "response_type=code&client_id=a%00b&redirect_uri=http://127.0.0.1/cb&code_challenge={challenge}&code_challenge_method=S256&action=deny"
            )),
    ];
    for request in requests {
        let resp = request.send().await.unwrap();
        let status = resp.status();
        let target = resp.url().path().to_owned();
        // Answered by the guard in front of the routes, and still observed: the request's id.
        let id = resp.headers().get("x-request-id").cloned();
        let body = resp.text().await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{target}: {body}");
        assert!(body.contains("U+0000"), "{target}: {body}");
        assert!(id.is_some_and(|id| !id.is_empty()), "{target}: no x-request-id");
    }
    // A socket authenticated by its bearer subscribes by session id alone.
    let mut ws = svc_tests::live::LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send("subscribe", json!({ "sessionId": "a\u{0}b" })).await;
    let e = ws.expect("error").await;
    assert_eq!(e["code"], "BAD_FRAME", "{e}");
    assert_eq!(e["message"], format!("payload.sessionId {NUL_RULE}"));

    let registered = app
        .client
        .post(url("/oauth/register"))
        .json(&json!({ "redirect_uris": ["http://127.0.0.1/c\u{0}b"], "client_name": "x" }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        registered.status(),
        StatusCode::BAD_REQUEST,
        "a redirect URI is parsed first"
    );
}
