//! `/mcp` as a transport: JSON-RPC envelopes, auth, protocol negotiation, tool declarations and
//! the DNS-rebinding guard, over real HTTP.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    an_unsupported_protocol_version_header_is_a_bad_request,
    invalid_json_is_a_parse_error,
    non_requests_are_invalid_requests,
    unknown_methods_are_method_not_found,
    notifications_are_accepted_without_a_body,
    initialize_negotiates_the_protocol_version,
    initialize_advertises_the_mcp_apps_capabilities,
    tools_list_declares_every_agent_tool,
    invalid_tool_arguments_name_the_field_and_rule,
    unknown_tools_are_invalid_params,
    get_without_credentials_asks_for_a_bearer,
    a_waiting_consume_sends_its_head_first_and_stays_cancellable,
);

on_every_backend!(Auth::Strict =>
    strict_mode_accepts_only_minted_keys,
);

/// A `svc_consume` that has to wait is answered with its head at once and its JSON-RPC message as
/// the body when ready (the server holds the wait alone, not the request); until then the
/// sender's `notifications/cancelled` still ends it with -32800.
async fn a_waiting_consume_sends_its_head_first_and_stays_cancellable(app: TestApp) {
    use std::time::Duration;
    let rendered = app
        .render("held card", json!({ "propsSpec": { "type": "object" } }), json!({}))
        .await;
    let session_id = rendered["sessionId"].as_str().unwrap().to_owned();
    let post = |body: Value| {
        app.client
            .post(app.mcp_url())
            .bearer_auth(&app.bearer)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let consume = json!({ "jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": { "name": "svc_consume", "arguments": { "sessionId": session_id, "timeout": 20 } } });
    let head = tokio::time::timeout(Duration::from_secs(10), post(consume))
        .await
        .expect("the head comes before the 20 s wait ends")
        .unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    assert!(
        head.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let body = tokio::spawn(head.text());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!body.is_finished(), "the answer waits for a gesture");

    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 77 } });
    assert_eq!(post(cancel).await.unwrap().status(), StatusCode::ACCEPTED);
    let text = tokio::time::timeout(Duration::from_secs(10), body)
        .await
        .expect("the cancelled wait answers at once")
        .unwrap()
        .unwrap();
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["id"], 77, "{answer}");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
}

/// MCP transport rule: an `MCP-Protocol-Version` the server does not speak is a 400, on every
/// JSON-RPC route; a supported one, or none at all (clients before 2025-06-18), is served.
async fn an_unsupported_protocol_version_header_is_a_bad_request(app: TestApp) {
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    let post = |path: &str, version: Option<&str>| {
        let mut request = app
            .client
            .post(format!("{}{path}", app.base))
            .bearer_auth(&app.bearer)
            .header("accept", "application/json, text/event-stream")
            .json(&ping);
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version);
        }
        request.send()
    };
    for path in ["/mcp", "/ops"] {
        let refused = post(path, Some("1999-01-01")).await.unwrap();
        assert_eq!(refused.status(), 400, "{path}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32600, "{path}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("\"1999-01-01\""),
            "{body}"
        );
        assert_eq!(post(path, Some("2025-06-18")).await.unwrap().status(), 200, "{path}");
        assert_eq!(post(path, None).await.unwrap().status(), 200, "{path}");
    }
}

async fn invalid_json_is_a_parse_error(app: TestApp) {
    let (status, _, body) = app.post_raw(Some(&app.bearer), "{not json".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], -32700);
    assert_eq!(body["id"], Value::Null);
}

async fn non_requests_are_invalid_requests(app: TestApp) {
    for body in [
        json!([1, 2]),
        json!({ "jsonrpc": "1.0", "id": 1, "method": "ping" }),
        json!({ "jsonrpc": "2.0", "id": 1 }),
        json!("ping"),
    ] {
        let (status, _, reply) = app.post_raw(Some(&app.bearer), body.to_string()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(reply["error"]["code"], -32600, "{body}: {reply}");
    }
}

async fn unknown_methods_are_method_not_found(app: TestApp) {
    let (_, body) = app.rpc("frobnicate", json!({})).await;
    assert_eq!(body["error"]["code"], -32601);
    assert_eq!(body["id"], 1);
}

async fn notifications_are_accepted_without_a_body(app: TestApp) {
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    let (status, headers, body) = app.post_raw(Some(&app.bearer), note).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body, Value::Null);
    assert!(headers.get("mcp-session-id").is_none(), "the server is stateless");
}

async fn initialize_negotiates_the_protocol_version(app: TestApp) {
    let (_, known) = app.rpc("initialize", json!({ "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } })).await;
    assert_eq!(known["result"]["protocolVersion"], "2025-03-26");
    let (_, unknown) = app.rpc("initialize", json!({ "protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } })).await;
    assert_eq!(
        unknown["result"]["protocolVersion"],
        svc_protocol::MCP_PROTOCOL_VERSIONS[0]
    );
}

async fn initialize_advertises_the_mcp_apps_capabilities(app: TestApp) {
    let (_, body) = app.rpc("initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } })).await;
    let caps = &body["result"]["capabilities"];
    assert_eq!(caps["tools"], json!({ "listChanged": true }));
    assert_eq!(caps["resources"], json!({ "subscribe": false, "listChanged": false }));
    assert_eq!(caps["experimental"]["io.modelcontextprotocol/ui"], json!({}));
    let instructions = body["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("svc_handshake"), "{instructions}");
}

async fn tools_list_declares_every_agent_tool(app: TestApp) {
    let (_, body) = app.rpc("tools/list", json!({})).await;
    let tools = body["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "svc_handshake",
        "svc_render",
        "svc_consume",
        "svc_update",
        "svc_amend",
        "svc_emit",
        "svc_get_session",
        "svc_get_render_source",
        "svc_list_sessions",
        "svc_list_gadgets",
        "svc_list_themes",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        let runtime = tool["name"].as_str().unwrap().starts_with("svc_runtime_");
        let expected = if runtime { json!(["app"]) } else { json!(["model"]) };
        assert_eq!(tool["_meta"]["ui"]["visibility"], expected, "{}", tool["name"]);
    }
    for runtime in ["svc_runtime_refresh_ws_token", "svc_runtime_sync_context"] {
        assert!(names.contains(&runtime), "{runtime} missing");
    }
    let render = tools.iter().find(|t| t["name"] == "svc_render").unwrap();
    assert_eq!(render["_meta"]["ui"]["resourceUri"], "ui://svc/render");
    let consume = tools.iter().find(|t| t["name"] == "svc_consume").unwrap();
    assert_eq!(consume["inputSchema"]["properties"]["timeout"]["maximum"], 25);
    assert_eq!(consume["inputSchema"]["required"], json!(["sessionId"]));
}

async fn invalid_tool_arguments_name_the_field_and_rule(app: TestApp) {
    let err = app
        .tool_rpc_error("svc_consume", json!({ "sessionId": "x", "timeout": 26 }))
        .await;
    assert_eq!(err["code"], -32602);
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("timeout") && message.contains("25"), "{message}");
    let err = app
        .tool_rpc_error("svc_handshake", json!({ "blueprintDraft": { "contract": {} } }))
        .await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("intent"), "{err}");
}

async fn unknown_tools_are_invalid_params(app: TestApp) {
    let err = app.tool_rpc_error("svc_nope", json!({})).await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("svc_nope"));
}

async fn get_without_credentials_asks_for_a_bearer(app: TestApp) {
    let anonymous = app.client.get(app.mcp_url()).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let challenge = anonymous.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.starts_with("Bearer realm=\"mcp\""), "{challenge}");
    let with_bearer = app
        .client
        .get(app.mcp_url())
        .bearer_auth(&app.bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(with_bearer.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn strict_mode_accepts_only_minted_keys(app: TestApp) {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }).to_string();
    let (status, headers, reply) = app.post_raw(None, body.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply["error"]["code"], -32007);
    assert!(headers["www-authenticate"].to_str().unwrap().contains("realm=\"mcp\""));
    let (status, _, reply) = app.post_raw(Some("svc_user_not-a-real-key"), body.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply["error"]["code"], -32007);
    let (status, _, reply) = app.post_raw(Some(&app.bearer), body).await;
    assert_eq!(status, StatusCode::OK);
    assert!(reply["result"]["tools"].is_array());
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_on_loopback() {
    let app = TestApp::spawn("host_guard", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string();
    let rebound = app
        .client
        .post(app.mcp_url())
        .header("host", "evil.example")
        .bearer_auth("x")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    let cross_origin = app
        .client
        .post(app.mcp_url())
        .header("origin", "https://evil.example")
        .bearer_auth("x")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(cross_origin.status(), StatusCode::FORBIDDEN);
    let local_origin = app
        .client
        .post(app.mcp_url())
        .header("origin", "http://localhost:3000")
        .header("content-type", "application/json")
        .bearer_auth("x")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(local_origin.status(), StatusCode::OK);
}

/// Behind a proxy that forwards `Host`, a loopback-bound server answers the host of its public
/// base URL with no `allowed_hosts` of its own; any other name is still refused.
#[tokio::test]
async fn the_public_base_urls_host_is_allowed_on_loopback() {
    // The server's results name the public URL; the test reaches it on its loopback port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let app = TestApp::spawn_configured("host_guard_public", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.server.port = port;
        s.server.public_base_url = "https://svc.example.com".into();
    })
    .await
    .unwrap();
    let mcp_url = format!("http://127.0.0.1:{port}/mcp");
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string();
    for (host, origin, status) in [
        ("svc.example.com", None, StatusCode::OK),
        ("SVC.example.com:443", Some("https://svc.example.com"), StatusCode::OK),
        ("evil.example", None, StatusCode::FORBIDDEN),
        ("svc.example.com", Some("https://evil.example"), StatusCode::FORBIDDEN),
    ] {
        let mut request = app
            .client
            .post(&mcp_url)
            .header("host", host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .bearer_auth("x")
            .body(body.clone());
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), status, "Host {host}, Origin {origin:?}");
    }
}

#[tokio::test]
async fn health_and_readiness_answer() {
    let app = TestApp::spawn("health", Backend::Sqlite, Auth::Strict).await.unwrap();
    let health = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK, "/healthz");
    // Ready once the blueprint index is built (empty here, so at once or nearly).
    let ready = svc_tests::readiness_within(&app.client, &app.base, std::time::Duration::from_secs(10)).await;
    assert_eq!(ready, StatusCode::OK, "/readyz");
}
