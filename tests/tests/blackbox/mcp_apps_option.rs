//! The MCP-Apps option (Document 2): on, `initialize` advertises the UI extension and renders
//! carry the mount metadata (with a configured public WebSocket URL and, optionally, an external
//! runtime bundle with its integrity); off, neither, and renders stay readable through
//! `resources/read`. The option needs the live channel: start-up fails with one line otherwise.
//! With the live channel off, its routes answer 404 and no wsToken is minted or refreshed.

use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_both_backends, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

on_both_backends!(
    on_by_default_the_capability_and_the_mount_metadata_are_there,
    off_no_capability_no_meta_and_renders_stay_readable,
    a_configured_ws_url_and_external_runtime_reach_every_bootstrap,
    with_the_live_channel_off_its_routes_answer_404,
);

fn contract() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } })
}

async fn initialize(app: &TestApp) -> Value {
    let (status, body) = app
        .rpc(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "clientInfo": { "name": "t", "version": "1" }, "capabilities": {} }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn render_tool(app: &TestApp) -> Value {
    let (_, listed) = app.rpc("tools/list", json!({})).await;
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "svc_render")
        .cloned()
        .expect("svc_render is listed")
}

/// Handshake + render; the whole tool result (body and `_meta`).
async fn rendered(app: &TestApp) -> Value {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "option card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    body["result"].clone()
}

async fn read(app: &TestApp, uri: &Value) -> Value {
    let (status, body) = app.rpc("resources/read", json!({ "uri": uri })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["contents"][0].clone()
}

async fn on_by_default_the_capability_and_the_mount_metadata_are_there(backend: Backend) {
    let Some(app) = TestApp::spawn_configured("mcp_apps_on", backend, Auth::DevAllowAll, |_| {}).await else {
        return;
    };
    let init = initialize(&app).await;
    assert_eq!(
        init["capabilities"]["experimental"]["io.modelcontextprotocol/ui"],
        json!({})
    );
    assert_eq!(render_tool(&app).await["_meta"]["ui"]["visibility"], json!(["model"]));
    let (_, listed) = app.rpc("tools/list", json!({})).await;
    let refresh = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "svc_runtime_refresh_ws_token")
        .cloned()
        .expect("the runtime tools are listed for the card");
    assert_eq!(refresh["_meta"]["ui"]["visibility"], json!(["app"]));
    let result = rendered(&app).await;
    let uri = &result["structuredContent"]["resourceUri"];
    assert_eq!(&result["_meta"]["ui"]["resourceUri"], uri);
    let slice = &result["_meta"]["ai.svc/render"];
    // Ours, at the URL that names its content hash: kept by a host for a year.
    let runtime_url = slice["runtimeUrl"].as_str().unwrap();
    assert!(
        runtime_url.starts_with(&format!("{}/_svc/iframe-runtime.js?v=", app.base)),
        "{runtime_url}"
    );
    let runtime = app.client.get(runtime_url).send().await.unwrap();
    assert_eq!(runtime.status(), StatusCode::OK);
    assert_eq!(
        runtime.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert!(slice.get("runtimeIntegrity").is_none(), "{slice}");
    assert_eq!(slice["wsUrl"], format!("{}/ws", app.base.replace("http://", "ws://")));
}

async fn off_no_capability_no_meta_and_renders_stay_readable(backend: Backend) {
    let Some(app) = TestApp::spawn_configured("mcp_apps_off", backend, Auth::DevAllowAll, |s| {
        s.mcp_apps.enabled = false;
    })
    .await
    else {
        return;
    };
    let init = initialize(&app).await;
    assert!(init["capabilities"].get("experimental").is_none(), "{init}");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    assert!(render_tool(&app).await.get("_meta").is_none());
    let (_, listed) = app.rpc("tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"svc_consume"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("svc_runtime_")),
        "the card's runtime tools are MCP-Apps only: {names:?}"
    );
    let result = rendered(&app).await;
    assert!(result.get("_meta").is_none(), "no mount metadata: {result}");
    let uri = &result["structuredContent"]["resourceUri"];
    assert!(uri.as_str().unwrap().starts_with("ui://svc/render/"));
    let mount = read(&app, uri).await;
    assert_eq!(mount["mimeType"], "text/html;profile=mcp-app");
    let html = mount["text"].as_str().unwrap();
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(
        html.contains(r#""title":"t""#),
        "the render's props are in the document"
    );
}

async fn a_configured_ws_url_and_external_runtime_reach_every_bootstrap(backend: Backend) {
    let Some(app) = TestApp::spawn_configured("mcp_apps_urls", backend, Auth::DevAllowAll, |s| {
        s.mcp_apps.ws_url = "wss://live.example.com/ws".into();
        s.mcp_apps.runtime_url = "https://cdn.example.com/svc/iframe-runtime.js".into();
        s.mcp_apps.runtime_integrity = "sha384-abc123".into();
    })
    .await
    else {
        return;
    };
    let result = rendered(&app).await;
    let slice = &result["_meta"]["ai.svc/render"];
    assert_eq!(slice["wsUrl"], "wss://live.example.com/ws");
    assert_eq!(slice["runtimeUrl"], "https://cdn.example.com/svc/iframe-runtime.js");
    assert_eq!(slice["runtimeIntegrity"], "sha384-abc123");
    let mount = read(&app, &result["structuredContent"]["resourceUri"]).await;
    let html = mount["text"].as_str().unwrap();
    assert!(html.contains(r#""wsUrl":"wss://live.example.com/ws""#), "{html}");
    assert!(html.contains(r#""runtimeIntegrity":"sha384-abc123""#));
    let connect = mount["_meta"]["ui"]["csp"]["connectDomains"].as_array().unwrap();
    assert!(connect.contains(&json!("wss://live.example.com")), "{connect:?}");
}

async fn with_the_live_channel_off_its_routes_answer_404(backend: Backend) {
    let Some(app) = TestApp::spawn_configured("live_off", backend, Auth::DevAllowAll, |s| {
        s.live.enabled = false;
        s.mcp_apps.enabled = false;
    })
    .await
    else {
        return;
    };
    let result = rendered(&app).await;
    let session = result["structuredContent"]["sessionId"].as_str().unwrap();
    let ws = app.client.get(format!("{}/ws", app.base)).send().await.unwrap();
    assert_eq!(ws.status(), StatusCode::NOT_FOUND);
    let poll = app
        .client
        .get(format!("{}/_svc/poll/{session}", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(poll.status(), StatusCode::NOT_FOUND);
    read(&app, &result["structuredContent"]["resourceUri"]).await;
    // No channel, so no wsToken to refresh: the runtime tool is not there to call.
    let refresh = app
        .call("svc_runtime_refresh_ws_token", json!({ "sessionId": session }))
        .await;
    assert_eq!(refresh["error"]["code"], -32602, "{refresh}");
    assert_eq!(
        refresh["error"]["message"],
        "Invalid params: name: unknown tool `svc_runtime_refresh_ws_token`"
    );
}

/// `svc serve --config <file holding toml>`: its exit status and stderr (a server that starts
/// is killed at 30 s).
fn serve_with(toml: &str) -> (bool, String) {
    let data_dir = temp_dir("svc-mcp-apps");
    let config = data_dir.join("svc.toml");
    std::fs::write(&config, toml).unwrap();
    let mut child = Command::new(BINARY)
        .args(["serve", "--port", "0", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(&data_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(data_dir);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, got: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    lines[0]
}

#[test]
fn the_option_without_the_live_channel_fails_start_up_with_one_line() {
    let (ok, stderr) = serve_with("[live]\nenabled = false\n");
    assert!(!ok);
    let line = one_line(&stderr);
    assert!(line.starts_with("svc: "), "{line}");
    assert!(line.contains("mcp_apps.enabled needs the live channel"), "{line}");
}

#[test]
fn an_external_runtime_without_its_integrity_fails_start_up_with_one_line() {
    let (ok, stderr) = serve_with("[mcp_apps]\nruntime_url = \"https://cdn.example.com/rt.js\"\n");
    assert!(!ok);
    let line = one_line(&stderr);
    assert!(
        line.contains("mcp_apps.runtime_url needs mcp_apps.runtime_integrity"),
        "{line}"
    );
}
