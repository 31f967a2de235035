//! `svc_consume`: its timeout and long-poll, and a session whose TTL elapsed (before and during a
//! poll), which every tool then answers like a missing one.

use serde_json::json;
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::agent_tools::support::rendered;

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll => consume_rules);

async fn consume_rules(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let now = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(now, json!({ "events": [], "status": "active" }));
    let started = std::time::Instant::now();
    let waited = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 1 }))
        .await;
    assert_eq!(waited["events"], json!([]));
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(900),
        "long-poll returned early"
    );
    for bad in [json!(26), json!(-1), json!(1.5), json!("5")] {
        let err = app
            .tool_rpc_error("svc_consume", json!({ "sessionId": session, "timeout": bad }))
            .await;
        assert_eq!(err["code"], -32602, "{bad}");
    }
    let unknown = app
        .tool_rpc_error(
            "svc_consume",
            json!({ "sessionId": "00000000-0000-0000-0000-000000000000" }),
        )
        .await;
    assert_eq!(unknown["code"], -32002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_ttl_elapsed_is_expired() {
    let app = svc_tests::TestApp::spawn_configured("ttl", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.sessions.default_ttl_seconds = 1;
    })
    .await
    .unwrap();
    let session = rendered(&app, json!({ "title": "t" })).await;
    let live = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(live["status"], "active");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let expired = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 5 }))
        .await;
    assert_eq!(
        expired,
        json!({ "events": [], "status": "expired" }),
        "an expired session answers at once"
    );
    let err = app
        .tool_rpc_error(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "u" } }),
        )
        .await;
    assert_eq!(err["code"], -32002);
    // Existence never leaks through the props: ones that break the contract are not looked at
    // (nor are ones over the props budget: the unit tests of `svc_update`).
    for (tool, arguments) in [
        (
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 7 } }),
        ),
        (
            "svc_amend",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 7 } }),
        ),
        (
            "svc_update",
            json!({ "sessionId": session, "kind": "merge", "patch": { "title": 7 } }),
        ),
    ] {
        let err = app.tool_rpc_error(tool, arguments).await;
        assert_eq!(err["code"], -32002, "{tool}: {err}");
    }
    // Every other tool answers an expired session like a missing one, and a read never revives it.
    for (tool, arguments) in [
        ("svc_get_session", json!({ "sessionId": session })),
        ("svc_get_render_source", json!({ "sessionId": session })),
        (
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": "x" }),
        ),
        ("svc_runtime_refresh_ws_token", json!({ "sessionId": session })),
        (
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": {} }),
        ),
    ] {
        let err = app.tool_rpc_error(tool, arguments).await;
        assert_eq!(err["code"], -32002, "{tool}: {err}");
    }
    let listed = app.tool_ok("svc_list_sessions", json!({})).await;
    assert_eq!(listed["sessions"][0]["status"], "expired");
    assert!(
        listed["sessions"][0].get("wsToken").is_none(),
        "no token for a session that cannot be subscribed"
    );
}

/// Document 1: when the TTL elapses, `svc_consume` returns `expired`; a long-poll waiting then
/// ends with it rather than at its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_ends_when_its_session_expires() {
    let app = TestApp::spawn_configured("ttl_poll", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.sessions.default_ttl_seconds = 2;
    })
    .await
    .unwrap();
    let session = rendered(&app, json!({ "title": "t" })).await;
    let started = std::time::Instant::now();
    let polled = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 20 }))
        .await;
    assert_eq!(polled, json!({ "events": [], "status": "expired" }));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the poll ended at the expiry: {:?}",
        started.elapsed()
    );
}
