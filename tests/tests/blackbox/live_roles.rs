//! `subscribe.role` (Document 2): a `user` socket is the card, an `agent` socket only observes.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    an_agent_socket_observes_but_sends_no_actions,
    a_user_socket_sends_actions_by_default_and_by_name,
    an_unknown_role_is_refused,
);

/// Renders a card with one action; returns its `_meta['ai.svc/render']` slice.
async fn card(app: &TestApp) -> Value {
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "role card", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    body["result"]["_meta"]["ai.svc/render"].clone()
}

async fn subscribe(app: &TestApp, slice: &Value, role: Option<&str>) -> LiveClient {
    let mut ws = LiveClient::connect(&app.base).await;
    let mut payload = json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] });
    if let Some(role) = role {
        payload["role"] = json!(role);
    }
    ws.send("subscribe", payload).await;
    ws
}

fn approve(session: &Value, client_seq: i64) -> Value {
    json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "approve", "data": {} }, "clientSeq": client_seq })
}

async fn an_agent_socket_observes_but_sends_no_actions(app: TestApp) {
    let slice = card(&app).await;
    let session = &slice["sessionId"];
    let mut agent = subscribe(&app, &slice, Some("agent")).await;
    let ack = agent.expect("ack").await;
    assert_eq!(ack["role"], "agent");

    agent.send("action", approve(session, 1)).await;
    let refused = agent.expect("error").await;
    assert_eq!(refused["code"], "ROLE_FORBIDDEN", "{refused}");
    assert_eq!(refused["clientSeq"], 1);
    let drained = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 0 }))
        .await;
    assert_eq!(drained["events"], json!([]), "nothing was stored");

    // It still observes: an amend reaches it as props_update.
    app.tool_ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "seen" } }),
    )
    .await;
    let update = agent.expect("props_update").await;
    assert_eq!(update["props"], json!({ "title": "seen" }));
    agent.send("ping", Value::Null).await;
    assert_eq!(agent.recv().await["type"], "pong");
}

async fn a_user_socket_sends_actions_by_default_and_by_name(app: TestApp) {
    let slice = card(&app).await;
    let session = &slice["sessionId"];
    for (role, seq) in [(None, 1), (Some("user"), 2)] {
        let mut ws = subscribe(&app, &slice, role).await;
        assert_eq!(ws.expect("ack").await["role"], "user");
        ws.send("action", approve(session, seq)).await;
        let stored = ws.expect("system").await;
        assert_eq!(stored["event"], "action_stored", "{stored}");
    }
    let drained = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 0 }))
        .await;
    assert_eq!(drained["events"].as_array().unwrap().len(), 2);
}

async fn an_unknown_role_is_refused(app: TestApp) {
    let slice = card(&app).await;
    let mut ws = subscribe(&app, &slice, Some("admin")).await;
    let refused = ws.expect("error").await;
    assert_eq!(refused["code"], "BAD_FRAME", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("role"), "{message}");
    assert!(message.contains("`user` or `agent`"), "{message}");
    // The socket is not bound: an action is answered as before a subscribe.
    ws.send("action", approve(&slice["sessionId"], 1)).await;
    assert_eq!(ws.expect("error").await["code"], "NOT_SUBSCRIBED");
    ws.expect_silence(Duration::from_millis(200)).await;
}
