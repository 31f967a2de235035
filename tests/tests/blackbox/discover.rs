//! `svc_discover` (Document 1; hosted deployments only): listed and answered in hosted mode with
//! the protocol revision, the content, shell and adapter types, the component capabilities and
//! the caller's app settings (`svc apps configure`); absent from a self-hosted server.

use crate::federation_support;
use crate::ops_support;

use federation_support::configure_app;
use ops_support::{BINARY, Client, app_with_prompt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

async fn tool_names(client: &Client, path: &str) -> Vec<String> {
    let (status, _, body) = client.post(path, "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn discover(client: &Client, path: &str) -> Value {
    let (status, _, body) = client
        .post(path, "tools/call", json!({ "name": "svc_discover", "arguments": {} }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_server_describes_itself_and_the_callers_app() {
    // Hosted deployments run on PostgreSQL.
    let Some(app) = TestApp::spawn_configured("discover_hosted", Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        // Hosted mode seals provider keys and will not start without a master key.
        s.hosted.master_keys =
            svc::settings::SecretList::Many(vec!["k1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=".to_owned()]);
    })
    .await
    else {
        return;
    };
    let client = Client::of(&app);
    assert!(tool_names(&client, "/mcp").await.contains(&"svc_discover".to_owned()));

    let app_id = app_with_prompt(&client, "Discoverable", "x")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/apps/{app_id}/mcp");
    let bare = discover(&client, &path).await["result"]["structuredContent"].clone();
    assert_eq!(bare["protocolVersion"], "draft-2026-06-12");
    assert_eq!(bare["shellTypes"], json!(["chat", "fullscreen", "spatial"]));
    assert_eq!(
        bare["adapterTypes"],
        json!(["voice", "camera", "location", "bluetooth"])
    );
    assert!(bare["contentTypes"].as_array().is_some_and(|t| !t.is_empty()), "{bare}");
    let capabilities = bare["componentCapabilities"].as_array().unwrap();
    assert!(capabilities.contains(&json!("useProps")), "{bare}");
    assert_eq!(bare["app"], json!({}), "nothing set, nothing reported: {bare}");

    configure_app(
        BINARY,
        &app.settings.database_url(),
        &app_id,
        &[
            "--rate-limit-per-minute",
            "120",
            "--enabled-adapters",
            "voice,location",
            "--granted-capabilities",
            "clipboard",
            "--default-shell-type",
            "fullscreen",
            "--auth-mode",
            "native",
        ],
    );
    let configured = discover(&client, &path).await["result"]["structuredContent"]["app"].clone();
    assert_eq!(
        configured,
        json!({
            "enabledAdapters": ["voice", "location"],
            "grantedCapabilities": ["clipboard"],
            "defaultShellType": "fullscreen",
            "authMode": "native",
            "rateLimitPerMinute": 120,
        })
    );
    let universal = discover(&client, "/mcp").await["result"]["structuredContent"]["app"].clone();
    assert_eq!(universal, json!({}), "the default app has its own (empty) settings");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_hosted_server_has_no_svc_discover() {
    let Some(app) = TestApp::spawn("discover_self_hosted", Backend::Sqlite, Auth::Strict).await else {
        return;
    };
    let client = Client::of(&app);
    assert!(!tool_names(&client, "/mcp").await.contains(&"svc_discover".to_owned()));
    let body = discover(&client, "/mcp").await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Invalid params: name: unknown tool `svc_discover`"
    );
}
