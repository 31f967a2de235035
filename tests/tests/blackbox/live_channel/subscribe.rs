//! Subscribing: `subscribe` before anything else, the tokens that may subscribe (wsToken, session
//! token, a refreshed one, a bearer on the upgrade) and the ones refused alike, and the deadline
//! of a socket that never subscribes.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{action, card, contract, subscribed};

on_every_backend!(Auth::DevAllowAll =>
    subscribe_must_come_first_and_acks_with_cursors,
    bad_tokens_are_refused_alike,
    a_session_token_reconnects,
    runtime_tools_refresh_tokens_and_sync_context,
    a_bearer_on_the_upgrade_subscribes_its_own_apps,
);

async fn subscribe_must_come_first_and_acks_with_cursors(app: TestApp) {
    let (session, slice) = card(&app).await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send("ping", Value::Null).await;
    assert_eq!(ws.recv().await["type"], "pong", "ping works before subscribe");
    ws.send("action", action(&session, "approve", json!({ "note": "x" }), 1))
        .await;
    assert_eq!(ws.expect("error").await["code"], "NOT_SUBSCRIBED");
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": slice["wsToken"], "supportedVersions": ["draft-2026-06-12"] }),
    )
    .await;
    let ack = ws.expect("ack").await;
    assert_eq!(ack["sessionId"], session.as_str());
    assert_eq!(ack["appId"], slice["appId"]);
    assert_eq!(ack["epoch"], 1);
    assert_eq!(ack["props"], json!({ "title": "t" }));
    assert_eq!(ack["lastSequence"], 0);
    assert!(
        ack["lastStreamSeq"].as_i64().unwrap() >= 1,
        "generation progress was streamed on _svc:lifecycle"
    );
    assert!(ack["component"]["code"].as_str().unwrap().contains("export default"));
    assert!(ack["sessionToken"].is_string());
    ws.send("ping", Value::Null).await;
    assert_eq!(ws.recv().await["type"], "pong");
    let mut other = LiveClient::connect(&app.base).await;
    other
        .send(
            "subscribe",
            json!({ "sessionId": session, "wsToken": slice["wsToken"], "supportedVersions": ["1.0.0"] }),
        )
        .await;
    assert_eq!(other.expect("error").await["code"], "UNSUPPORTED_VERSION");
}

async fn bad_tokens_are_refused_alike(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (other_session, other_slice) = card(&app).await;
    let token = slice["wsToken"].as_str().unwrap();
    let tampered = format!("{}x", &token[..token.len() - 1]);
    let cases = [
        json!({ "sessionId": session, "wsToken": tampered }),
        json!({ "sessionId": session, "wsToken": other_slice["wsToken"] }),
        json!({ "sessionId": other_session, "wsToken": token }),
        json!({ "sessionId": session }),
        json!({ "sessionId": "00000000-0000-0000-0000-000000000000", "wsToken": token }),
        json!({ "sessionId": session, "wsToken": token, "appId": "another-app" }),
    ];
    let mut answers = vec![];
    for payload in cases {
        let mut ws = LiveClient::connect(&app.base).await;
        ws.send("subscribe", payload.clone()).await;
        let error = ws.expect("error").await;
        assert_eq!(error["code"], "AUTH_FAILED", "{payload}");
        assert!(error.get("props").is_none());
        answers.push(error);
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "every refusal is the same answer"
    );
}

async fn a_session_token_reconnects(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (_, ack) = subscribed(&app, &slice, json!({})).await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "sessionToken": ack["sessionToken"] }),
    )
    .await;
    let again = ws.expect("ack").await;
    assert!(
        again.get("sessionToken").is_none(),
        "a session token is issued once, on the wsToken subscribe"
    );
    let mut misuse = LiveClient::connect(&app.base).await;
    misuse
        .send(
            "subscribe",
            json!({ "sessionId": session, "wsToken": ack["sessionToken"] }),
        )
        .await;
    assert_eq!(
        misuse.expect("error").await["code"],
        "AUTH_FAILED",
        "a session token is not a wsToken"
    );
}

async fn runtime_tools_refresh_tokens_and_sync_context(app: TestApp) {
    let (session, _) = card(&app).await;
    let fresh = app
        .tool_ok("svc_runtime_refresh_ws_token", json!({ "sessionId": session }))
        .await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": fresh["wsToken"] }),
    )
    .await;
    ws.expect("ack").await;
    let synced = app
        .tool_ok(
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": { "tab": "lines", "undeclared": 1 } }),
        )
        .await;
    assert_eq!(synced["contextSnapshot"], json!({ "tab": "lines" }));
    let bad = app
        .tool_error_result(
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": { "tab": "other" } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
    let missing = app
        .tool_rpc_error("svc_runtime_refresh_ws_token", json!({ "sessionId": "nope" }))
        .await;
    assert_eq!(missing["code"], -32002);
}

/// A socket that never subscribes is closed once `live.subscribe_timeout_seconds` has passed,
/// though it answers every ping: it would otherwise hold its place under the connection cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_never_subscribes_is_closed_after_the_subscribe_timeout() {
    let app = TestApp::spawn_configured(
        "subscribe_timeout",
        svc_tests::Backend::Sqlite,
        Auth::DevAllowAll,
        |s| s.live.subscribe_timeout_seconds = 1,
    )
    .await
    .unwrap();
    let mut idle = LiveClient::connect(&app.base).await;
    let opened = std::time::Instant::now();
    idle.send("ping", Value::Null).await;
    assert_eq!(idle.recv().await["type"], "pong");
    let error = idle.recv().await;
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["payload"]["code"], "NOT_SUBSCRIBED", "{error}");
    assert_eq!(error["payload"]["message"], "no subscribe within 1 s of opening");
    assert_eq!(idle.recv().await, json!({ "type": "_closed", "payload": 1008 }));
    assert!(opened.elapsed() >= Duration::from_millis(900), "{:?}", opened.elapsed());

    // A socket that subscribed in time stays open past the deadline.
    let (_, slice) = card(&app).await;
    let (mut bound, _) = subscribed(&app, &slice, json!({})).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    bound.send("ping", Value::Null).await;
    assert_eq!(bound.recv().await["type"], "pong");
}

/// POSTs one JSON-RPC request to `path` with the app's bearer; returns the whole reply.
async fn post_rpc(app: &TestApp, path: &str, method: &str, params: Value) -> Value {
    app.client
        .post(format!("{}{path}", app.base))
        .bearer_auth(&app.bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A bearer on the upgrade request authenticates the socket like `/mcp`: its default app's
/// sessions without a token; `appId` picks another app of the same identity (checked like
/// `/apps/<appId>/mcp`); an app the bearer does not hold, or a mismatched `appId`, is refused.
async fn a_bearer_on_the_upgrade_subscribes_its_own_apps(app: TestApp) {
    let (default_session, _) = card(&app).await;
    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send("subscribe", json!({ "sessionId": default_session })).await;
    assert_eq!(ws.expect("ack").await["sessionId"], default_session.as_str());

    // A second app of the same identity, and a card rendered on its endpoint.
    let made = post_rpc(
        &app,
        "/ops",
        "tools/call",
        json!({ "name": "svc_ops_create_app", "arguments": { "displayName": "second" } }),
    )
    .await;
    let second = made["result"]["structuredContent"]["appId"]
        .as_str()
        .unwrap_or_else(|| panic!("svc_ops_create_app: {made}"))
        .to_owned();
    let endpoint = format!("/apps/{second}/mcp");
    let hs = post_rpc(&app, &endpoint, "tools/call", json!({ "name": "svc_handshake", "arguments": { "intent": "second app card", "blueprintDraft": { "contract": contract() } } })).await;
    let handshake = &hs["result"]["structuredContent"]["handshakeId"];
    let rendered = post_rpc(
        &app,
        &endpoint,
        "tools/call",
        json!({ "name": "svc_render", "arguments": { "handshakeId": handshake, "props": { "title": "t" } } }),
    )
    .await;
    let second_session = rendered["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("svc_render on {endpoint}: {rendered}"))
        .to_owned();

    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send("subscribe", json!({ "sessionId": second_session })).await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "without appId the bearer means its default app"
    );
    ws.send("subscribe", json!({ "sessionId": second_session, "appId": second }))
        .await;
    let ack = ws.expect("ack").await;
    assert_eq!(ack["sessionId"], second_session.as_str());
    assert_eq!(ack["appId"], second.as_str());

    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": second_session, "appId": "NoSuchApp0000000" }),
    )
    .await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "an app the bearer does not hold"
    );
    ws.send("subscribe", json!({ "sessionId": default_session, "appId": second }))
        .await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "a session outside the named app"
    );
}
