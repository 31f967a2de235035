//! Session `variant` (Document 1): a render of a manifest UI declared with `"mount": "mcpApps"`
//! is an `mcpApps` session (a self-contained MCP-Apps HTML document); every other render is
//! `render`. An `mcpApps` session has no `contextSnapshot` and no component source, its locator
//! answers its own document, and without the MCP-Apps option its locator cannot be mounted
//! (MOUNT_UNAVAILABLE, `data.code: NOT_SUPPORTED`).

use std::path::PathBuf;

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_both_backends};

on_both_backends!(
    a_manifest_mcp_apps_ui_renders_an_mcp_apps_session,
    a_generated_render_is_a_render_variant_with_its_context_snapshot,
    without_the_option_an_mcp_apps_locator_is_not_supported,
);

const BOARD_HTML: &str = include_str!("../../fixtures/mcp-apps-manifest/uis/board/board.html");

async fn server(test: &str, backend: Backend, mcp_apps: bool) -> Option<TestApp> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp-apps-manifest/svc.json");
    TestApp::spawn_configured(test, backend, Auth::DevAllowAll, |s| {
        s.blueprints.manifest = manifest.display().to_string();
        s.mcp_apps.enabled = mcp_apps;
    })
    .await
}

fn board_contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "contextSpec": { "tab": { "schema": { "enum": ["today", "week"] }, "default": "today" } }
    })
}

/// Handshake on the board's name and contract (a cache hit on the manifest UI), then render.
async fn render_board(app: &TestApp) -> Value {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "Status board", "blueprintDraft": { "contract": board_contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["origin"], "cache", "{hs}");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], "status-board", "{hs}");
    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Today" } }),
        )
        .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    assert_eq!(rendered["blueprintId"], "status-board");
    rendered
}

async fn a_manifest_mcp_apps_ui_renders_an_mcp_apps_session(backend: Backend) {
    let Some(app) = server("mcp_apps_variant", backend, true).await else {
        return;
    };
    let rendered = render_board(&app).await;
    let session = &rendered["sessionId"];
    let projection = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(projection["variant"], "mcpApps", "{projection}");
    assert_eq!(projection["id"], *session);
    assert!(
        projection.get("contextSnapshot").is_none(),
        "only a render variant has one: {projection}"
    );

    let source = app
        .tool_error_result("svc_get_render_source", json!({ "sessionId": session }))
        .await;
    assert_eq!(source["error"]["code"], "no_source", "{source}");
    assert!(
        source["error"]["message"]
            .as_str()
            .unwrap()
            .contains("non-component variant"),
        "{source}"
    );

    let (_, read) = app
        .rpc("resources/read", json!({ "uri": rendered["resourceUri"] }))
        .await;
    let mount = &read["result"]["contents"][0];
    assert_eq!(mount["mimeType"], "text/html;profile=mcp-app", "{read}");
    assert_eq!(mount["text"], BOARD_HTML, "the declared document, as is");

    let bundle = app
        .tool_ok("svc_render_blueprint", json!({ "blueprintId": "status-board" }))
        .await;
    assert_eq!(bundle["contentType"], "text/html;profile=mcp-app");
    assert_eq!(bundle["code"], BOARD_HTML);
}

async fn a_generated_render_is_a_render_variant_with_its_context_snapshot(backend: Backend) {
    let Some(app) = server("render_variant", backend, true).await else {
        return;
    };
    let rendered = app
        .render("weekly report card", board_contract(), json!({ "title": "Week" }))
        .await;
    let projection = app
        .tool_ok("svc_get_session", json!({ "sessionId": rendered["sessionId"] }))
        .await;
    assert_eq!(projection["variant"], "render", "{projection}");
    assert_eq!(projection["contextSnapshot"], json!({ "tab": "today" }), "{projection}");
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": rendered["sessionId"] }))
        .await;
    assert!(
        source["blueprint"]["source"]
            .as_str()
            .unwrap()
            .contains("export default")
    );
}

async fn without_the_option_an_mcp_apps_locator_is_not_supported(backend: Backend) {
    let Some(app) = server("mcp_apps_not_supported", backend, false).await else {
        return;
    };
    let rendered = render_board(&app).await;
    let (_, read) = app
        .rpc("resources/read", json!({ "uri": rendered["resourceUri"] }))
        .await;
    let error = &read["error"];
    assert_eq!(error["code"], -32006, "{read}");
    assert_eq!(error["message"], "Mount unavailable");
    assert_eq!(error["data"]["code"], "NOT_SUPPORTED", "{read}");
    // The session itself is there, and says what it is.
    let projection = app
        .tool_ok("svc_get_session", json!({ "sessionId": rendered["sessionId"] }))
        .await;
    assert_eq!(projection["variant"], "mcpApps");
}
