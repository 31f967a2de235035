//! Reading sessions: `svc_get_session` (tenant-scoped, times as epoch ms, activity),
//! `svc_get_render_source`, and `svc_list_sessions` (filters, limits, the `wsToken` pair).

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::agent_tools::support::{handshake, order_contract, rendered};

on_every_backend!(Auth::DevAllowAll =>
    get_session_projects_times_as_epoch_ms_and_bumps_activity,
    render_source_returns_the_tsx,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    sessions_are_tenant_scoped,
    list_sessions_filters_by_host_session_and_limits,
);

async fn sessions_are_tenant_scoped(app: TestApp) {
    // Under --dev-allow-all every bearer is `builder`; a strict server with two keys is another
    // test. Here: an unknown id and a random id answer identically.
    let a = app
        .tool_rpc_error("svc_get_session", json!({ "sessionId": "nope" }))
        .await;
    let b = app
        .tool_rpc_error(
            "svc_get_session",
            json!({ "sessionId": uuid::Uuid::new_v4().to_string() }),
        )
        .await;
    assert_eq!(a, b);
    assert_eq!(a["code"], -32002);
    for tool in ["svc_update", "svc_amend"] {
        let e = app
            .tool_rpc_error(tool, json!({ "sessionId": "nope", "kind": "replace", "props": {} }))
            .await;
        assert_eq!(e, a, "{tool}");
    }
    let e = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": "nope", "channel": "log", "payload": 1 }),
        )
        .await;
    assert_eq!(e, a);
    let e = app
        .tool_rpc_error("svc_get_render_source", json!({ "sessionId": "nope" }))
        .await;
    assert_eq!(e, a);
}

async fn get_session_projects_times_as_epoch_ms_and_bumps_activity(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let first = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(first["variant"], "render");
    assert_eq!(first["id"], session);
    assert_eq!(first["eventSequence"], 0);
    for field in ["createdAt", "lastActivityAt", "expiresAt"] {
        assert!(first[field].is_i64(), "{field} is epoch ms: {first}");
    }
    assert_eq!(first["contextSnapshot"], json!({ "tab": "summary" }));
    assert!(first.get("componentCode").is_none() && first.get("sourceCode").is_none());
    // The heartbeat's resolution is a second: past it a read records its own time...
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let bumped = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let at = |view: &Value, field: &str| view[field].as_i64().unwrap();
    assert!(
        at(&bumped, "lastActivityAt") >= at(&first, "lastActivityAt") + 1_100,
        "heartbeat bumped: {first} then {bumped}"
    );
    let ttl = at(&first, "expiresAt") - at(&first, "lastActivityAt");
    assert_eq!(
        at(&bumped, "expiresAt") - at(&bumped, "lastActivityAt"),
        ttl,
        "the TTL slides"
    );
    // ...and a read within it reports the recorded times, not a newer one it did not store. On a
    // slow machine the second read may itself land past the resolution: then it is a bump of its
    // own, a second or more later, and never a time in between.
    let again = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let moved = at(&again, "lastActivityAt") - at(&bumped, "lastActivityAt");
    assert!(moved == 0 || moved >= 1_000, "{bumped} then {again}");
    assert_eq!(at(&again, "expiresAt") - at(&again, "lastActivityAt"), ttl);
}

async fn render_source_returns_the_tsx(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let before = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let src = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": session }))
        .await;
    let source = src["blueprint"]["source"].as_str().unwrap();
    assert!(source.contains("export default"), "{source}");
    assert!(source.contains("useAction"), "the approve action is wired");
    assert_eq!(
        src["blueprint"]["contract"]["actionSpec"],
        order_contract()["actionSpec"]
    );
    assert_eq!(src["blueprint"]["fixtureProps"], json!({ "title": "t" }));
    let after = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert!(after["lastActivityAt"].as_i64() >= before["lastActivityAt"].as_i64());
}

async fn list_sessions_filters_by_host_session_and_limits(app: TestApp) {
    let mut ids = vec![];
    for i in 0..3 {
        let hs = handshake(&app, "listed", json!({})).await;
        let meta =
            json!({ "ai.svc/host-session": { "hostName": "claude", "hostSessionId": format!("conv-{}", i % 2) } });
        let body = app.rpc("tools/call", json!({ "name": "svc_render", "arguments": { "handshakeId": hs["handshakeId"], "props": {} }, "_meta": meta })).await.1;
        ids.push(
            body["result"]["structuredContent"]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    app.render("unhosted", json!({}), json!({})).await;
    let all = app.tool_ok("svc_list_sessions", json!({})).await;
    assert_eq!(all["sessions"].as_array().unwrap().len(), 4);
    let conv0 = app
        .tool_ok(
            "svc_list_sessions",
            json!({ "hostName": "claude", "hostSessionId": "conv-0" }),
        )
        .await;
    let got: Vec<&str> = conv0["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(got, vec![ids[0].as_str(), ids[2].as_str()], "newest last");
    let row = &conv0["sessions"][0];
    assert_eq!(row["hostName"], "claude");
    assert_eq!(row["status"], "active");
    assert!(
        row["createdAt"].as_str().unwrap().ends_with('Z'),
        "ISO 8601 strings here"
    );
    // An active row carries a wsToken that subscribes to its session (a host re-mounting it).
    let token = row["wsToken"].as_str().expect("an active row carries a wsToken");
    assert!(row["wsTokenExpiresAt"].as_str().unwrap().ends_with('Z'));
    let mut ws = svc_tests::live::LiveClient::connect(&app.base).await;
    ws.send("subscribe", json!({ "sessionId": row["sessionId"], "wsToken": token }))
        .await;
    ws.expect("ack").await;
    let limited = app.tool_ok("svc_list_sessions", json!({ "limit": 1 })).await;
    assert_eq!(limited["sessions"].as_array().unwrap().len(), 1);
    for bad in [0, 201] {
        let err = app.tool_rpc_error("svc_list_sessions", json!({ "limit": bad })).await;
        assert_eq!(err["code"], -32602);
    }
}

/// Document 1: the `wsToken` pair appears only where the deployment mints tokens. Without the live
/// channel (and so without the MCP-Apps option) no row carries one, as no render does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_sessions_mints_no_ws_token_without_the_live_channel() {
    // The live channel decides, not the MCP-Apps option: a card embedded without MCP-Apps
    // opens `/ws` with a listed token.
    for live in [false, true] {
        let app = TestApp::spawn_configured("no_live", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
            s.live.enabled = live;
            s.mcp_apps.enabled = false;
        })
        .await
        .unwrap();
        let session = rendered(&app, json!({ "title": "t" })).await;
        let listed = app.tool_ok("svc_list_sessions", json!({})).await;
        let row = &listed["sessions"][0];
        assert_eq!(row["sessionId"], session.as_str());
        assert_eq!(row["status"], "active");
        for field in ["wsToken", "wsTokenExpiresAt"] {
            assert_eq!(row.get(field).is_some(), live, "live {live}, {field}: {row}");
        }
    }
}
