//! Hosted mode (`svc serve --hosted`, docs/hosted.md): refused on SQLite and without a master key
//! in one line naming the fix; OAuth on; the hosted-only tools (provider keys, credits) listed on
//! `/ops` in hosted mode and absent in self-hosted mode; renders kept indefinitely unless a
//! `ttlSeconds` is given.

use crate::hosted_support;
use crate::ops_support;

use hosted_support::{handshake, hosted_app, render};
use ops_support::{BINARY, Client};
use serde_json::json;
use svc_tests::{Auth, Backend, TestApp, temp_dir};

const HOSTED_TOOLS: [&str; 5] = [
    "svc_ops_set_provider_key",
    "svc_ops_list_provider_keys",
    "svc_ops_remove_provider_key",
    "svc_ops_get_credit_balance",
    "svc_ops_list_credit_transactions",
];

#[test]
fn hosted_mode_on_sqlite_is_refused_in_one_line_naming_the_fix() {
    let data_dir = temp_dir("svc-hosted-sqlite");
    let output = std::process::Command::new(BINARY)
        .args(["serve", "--hosted", "--port", "0", "--data-dir"])
        .arg(&data_dir)
        .env("SVC_HOSTED__MASTER_KEYS", hosted_support::master_key("k1", 1))
        .output()
        .expect("run svc");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.trim();
    assert_eq!(line.lines().count(), 1, "{stderr}");
    assert!(
        line.contains("hosted mode needs PostgreSQL") && line.contains("--database-url"),
        "{line}"
    );
}

#[test]
fn hosted_mode_without_a_master_key_is_refused_naming_the_setting() {
    let data_dir = temp_dir("svc-hosted-nokey");
    let output = std::process::Command::new(BINARY)
        .args([
            "serve",
            "--hosted",
            "--port",
            "0",
            "--database-url",
            "postgres://nobody@127.0.0.1:1/none",
            "--data-dir",
        ])
        .arg(&data_dir)
        .env_remove("SVC_HOSTED__MASTER_KEYS")
        .output()
        .expect("run svc");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("hosted.master_keys"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_hosted_ops_lists_no_hosted_tool() {
    let app = TestApp::spawn("self_hosted_tools", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let names = Client::of(&app).ops_tool_names().await;
    assert_eq!(names.len(), 19, "{names:?}");
    for tool in HOSTED_TOOLS {
        assert!(!names.iter().any(|n| n == tool), "{tool} listed self-hosted");
    }
    let body = Client::of(&app).call("svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(body["error"]["code"], -32602, "an unlisted tool is unknown: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_ops_lists_all_24_tools_and_oauth_is_on() {
    let Some(app) = hosted_app("hosted_tools", |_| {}).await else {
        return;
    };
    let names = Client::of(&app).ops_tool_names().await;
    assert_eq!(names.len(), 24, "{names:?}");
    for tool in HOSTED_TOOLS {
        assert!(names.iter().any(|n| n == tool), "{tool} missing in hosted mode");
    }
    let metadata = app
        .client
        .get(format!("{}/.well-known/oauth-authorization-server", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(metadata.status(), 200, "hosted mode turns OAuth on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_renders_live_indefinitely_unless_a_ttl_is_given() {
    let Some(app) = hosted_app("hosted_ttl", |s| s.hosted.free_credit_cents = 1_000).await else {
        return;
    };
    let lifetime_days = |session: serde_json::Value| {
        (session["expiresAt"].as_i64().unwrap() - session["lastActivityAt"].as_i64().unwrap()) / 86_400_000
    };

    let first = render(&app, &handshake(&app, "kept card").await, json!({})).await;
    let sid = &first["result"]["structuredContent"]["sessionId"];
    let session = app.tool_ok("svc_get_session", json!({ "sessionId": sid })).await;
    assert!(
        lifetime_days(session) > 365 * 50,
        "a hosted render is kept indefinitely"
    );

    let second = render(&app, &handshake(&app, "short card").await, json!({ "ttlSeconds": 600 })).await;
    let sid = &second["result"]["structuredContent"]["sessionId"];
    let session = app.tool_ok("svc_get_session", json!({ "sessionId": sid })).await;
    assert_eq!(
        session["expiresAt"].as_i64().unwrap() - session["lastActivityAt"].as_i64().unwrap(),
        600_000,
        "an explicit ttlSeconds is honoured"
    );
}
