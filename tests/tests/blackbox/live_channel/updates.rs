//! What reaches a mounted card: its session's updates, amends and emits, and a new render in the
//! same host conversation.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{card, contract, subscribed};

on_every_backend!(Auth::DevAllowAll => a_new_render_in_the_same_host_conversation_reaches_mounted_cards);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll => updates_amends_and_emits_reach_the_card);

async fn updates_amends_and_emits_reach_the_card(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, ack) = subscribed(&app, &slice, json!({})).await;
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert_eq!(
        p,
        json!({ "sessionId": session, "props": { "title": "v2" }, "epoch": 2 })
    );
    app.tool_ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "merge", "patch": { "title": "v2b" } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert_eq!(
        (p["props"]["title"].as_str(), p["epoch"].as_i64()),
        (Some("v2b"), Some(2))
    );
    let base = ack["lastStreamSeq"].as_i64().unwrap();
    for (i, line) in ["a", "b"].iter().enumerate() {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": line }),
        )
        .await;
        let d = ws.expect("data").await;
        assert_eq!(d["channel"], "log");
        assert_eq!(d["payload"], *line);
        assert_eq!(d["mode"], "append");
        assert_eq!(d["seq"].as_i64().unwrap(), base + 1 + i as i64);
        assert!(d["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2b" } }),
    )
    .await;
    ws.expect_silence(Duration::from_millis(300)).await;
}

async fn render_in_conversation(app: &TestApp, conversation: &str) -> Value {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "live card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let meta = json!({ "ai.svc/host-session": { "hostName": "test-host", "hostSessionId": conversation } });
    let body = app
        .rpc("tools/call", json!({ "name": "svc_render", "arguments": { "handshakeId": hs["handshakeId"], "props": { "title": "t" } }, "_meta": meta }))
        .await
        .1;
    body["result"]["_meta"]["ai.svc/render"].clone()
}

async fn a_new_render_in_the_same_host_conversation_reaches_mounted_cards(app: TestApp) {
    let first = render_in_conversation(&app, "conv-a").await;
    let (mut ws, _) = subscribed(&app, &first, json!({})).await;
    let second = render_in_conversation(&app, "conv-a").await;
    let frame = ws.expect("render").await;
    assert_eq!(frame["session"]["sessionId"], second["sessionId"]);
    assert_eq!(
        frame["session"]["resourceUri"],
        format!("ui://svc/render/{}", second["sessionId"].as_str().unwrap())
    );
    assert_eq!(frame["matchType"], "host-session");
    render_in_conversation(&app, "conv-b").await;
    app.render("no conversation", json!({}), json!({})).await;
    ws.expect_silence(Duration::from_millis(300)).await;
}
