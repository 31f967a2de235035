//! Pools moved between servers with the real binary: `svc export-pool` from server A, then a
//! fresh server B started with `--seed-pool` serves the same blueprintIds as cache hits;
//! importing twice changes nothing; a tampered pool and a bad manifest stop start-up with one
//! line naming the problem.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

on_every_backend!(Auth::DevAllowAll => a_seeded_server_serves_the_exported_blueprints_as_cache_hits);

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    })
}

fn export(database_url: &str, out: &Path) -> String {
    let output = Command::new(BINARY)
        .args(["export-pool", "--out"])
        .arg(out)
        .args(["--database-url", database_url])
        .output()
        .expect("run export-pool");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "export-pool failed: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn backend(app: &TestApp) -> Backend {
    if app.is_postgres() {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

async fn a_seeded_server_serves_the_exported_blueprints_as_cache_hits(a: TestApp) {
    let approval = a
        .render("order approval", contract(), json!({ "title": "Order 1" }))
        .await;
    let forecast = a
        .render(
            "weather forecast",
            json!({ "propsSpec": { "type": "object", "properties": { "city": { "type": "string" } } } }),
            json!({ "city": "Oslo" }),
        )
        .await;
    let approval_id = approval["blueprintId"].as_str().unwrap().to_owned();

    let dir = temp_dir("svc-pool");
    let pool_path = dir.join("pool.json");
    let printed = export(&a.settings.database_url(), &pool_path);
    assert!(printed.contains("exported 2 blueprint(s)"), "{printed}");
    let pool: Value = serde_json::from_str(&std::fs::read_to_string(&pool_path).unwrap()).unwrap();
    assert_eq!(pool["format"], "svc-blueprint-pool");
    assert_eq!(pool["version"], 1);
    let ids: Vec<&str> = pool["blueprints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["blueprintId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [approval_id.as_str(), forecast["blueprintId"].as_str().unwrap()]);
    let first = &pool["blueprints"][0];
    for field in [
        "intent",
        "contract",
        "contractHash",
        "variance",
        "variantKey",
        "source",
        "code",
        "codeHash",
        "generator",
        "sourceKind",
        "createdAt",
    ] {
        assert!(first.get(field).is_some(), "{field} in {first}");
    }

    let seed = pool_path.display().to_string();
    let b = TestApp::spawn_configured("seeded", backend(&a), Auth::DevAllowAll, |s| {
        s.blueprints.seed_pool = seed.clone();
    })
    .await
    .expect("same backend as A");
    let hs = b
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "order approval", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["origin"], "cache", "{hs}");
    assert_eq!(hs["suggestion"]["cache"]["kind"], "exact");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], approval_id.as_str());
    let render = b
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Order 2" } }),
        )
        .await;
    assert_eq!(render["blueprintId"], approval_id.as_str());
    assert_eq!(render["cache"]["hit"], true);
    assert_eq!(render["cache"]["llmCallsAvoided"], 1);
    let source = b
        .tool_ok("svc_get_render_source", json!({ "sessionId": render["sessionId"] }))
        .await;
    assert_eq!(source["blueprint"]["source"], pool["blueprints"][0]["source"]);

    // The imported blueprints are indexed: a paraphrase finds them by meaning too.
    let hs = b
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "approve this order", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["cache"]["kind"], "semantic", "{hs}");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], approval_id.as_str());
    let found = b
        .tool_ok("svc_search_blueprints", json!({ "query": "weather forecast" }))
        .await;
    assert_eq!(found["results"][0]["id"], forecast["blueprintId"]);

    // Importing again (a replica with the same flag) is idempotent.
    let again = b.replica().await;
    let base = again.base.clone();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_search_blueprints", "arguments": { "query": "order approval" } } });
    let on_replica: Value = b
        .client
        .post(format!("{base}/mcp"))
        .bearer_auth(&b.bearer)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rows = on_replica["result"]["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(
        rows.iter().filter(|r| r["id"] == approval_id.as_str()).count(),
        1,
        "{on_replica}"
    );
    again.stop();
    let exported_from_b = dir.join("b.json");
    let printed = export(&b.settings.database_url(), &exported_from_b);
    assert!(
        printed.contains("exported 2 blueprint(s)"),
        "no duplicates after two imports: {printed}"
    );
    std::fs::remove_dir_all(dir).ok();
}

fn serve_fails(extra: &[&str]) -> String {
    let data = temp_dir("svc-bad-start");
    let output = Command::new(BINARY)
        .args(["serve", "--port", "0", "--dev-allow-all", "--data-dir"])
        .arg(&data)
        .args(extra)
        .output()
        .expect("run serve");
    std::fs::remove_dir_all(data).ok();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("svc: ")).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    lines[0].to_owned()
}

#[test]
fn a_tampered_pool_stops_start_up_naming_the_blueprint() {
    let dir = temp_dir("svc-bad-pool");
    let pool = json!({
        "format": "svc-blueprint-pool", "version": 1, "exportedAt": "2026-11-26T00:00:00Z",
        "blueprints": [{
            "blueprintId": "bp-1", "intent": "x", "contract": {}, "contractHash": "0", "variance": {}, "variantKey": "0",
            "source": "export default () => null", "code": "export default () => null;", "codeHash": "0",
            "generator": "builtin", "sourceKind": "llm", "createdAt": "2026-11-26T00:00:00Z"
        }]
    });
    let path = dir.join("pool.json");
    std::fs::write(&path, pool.to_string()).unwrap();
    let line = serve_fails(&["--seed-pool", path.to_str().unwrap()]);
    assert!(
        line.contains("--seed-pool") && line.contains("blueprint bp-1: contractHash does not match"),
        "{line}"
    );
    let newer = pool.to_string().replace("\"version\":1", "\"version\":2");
    std::fs::write(&path, newer).unwrap();
    let line = serve_fails(&["--seed-pool", path.to_str().unwrap()]);
    assert!(line.contains("version 2 is not supported"), "{line}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_bad_manifest_stops_start_up_naming_file_path_and_rule() {
    let dir = temp_dir("svc-bad-manifest");
    let manifest = dir.join("svc.json");
    std::fs::write(&manifest, r#"{ "app": { "gadgets": [{ "package": "@acme/x" }] } }"#).unwrap();
    let line = serve_fails(&["--manifest", manifest.to_str().unwrap()]);
    let want = format!(
        "svc: {}: at /app/gadgets/0: \"version\" is a required property (rule: required)",
        manifest.display()
    );
    assert_eq!(line, want);
    std::fs::write(dir.join("ui.tsx"), "export default function X( { return 1 }").unwrap();
    std::fs::write(dir.join("svc.ui.json"), r#"{ "id": "broken", "entryPoint": "ui.tsx" }"#).unwrap();
    std::fs::write(&manifest, r#"{ "blueprints": { "include": ["*.ui.json"] } }"#).unwrap();
    let line = serve_fails(&["--manifest", manifest.to_str().unwrap()]);
    assert!(line.contains("svc.ui.json: entryPoint: compilation failed"), "{line}");
    let line = serve_fails(&["--manifest", dir.join("missing.json").to_str().unwrap()]);
    assert!(line.ends_with("missing.json does not exist"), "{line}");
    std::fs::remove_dir_all(dir).ok();
}
