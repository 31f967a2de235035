//! Every tool `tools/list` publishes, on `/mcp` and `/ops`, is called at least once and answers a
//! result whose `structuredContent` validates against its published `outputSchema` (the harness
//! checks every call; see `svc_tests::output_schemas`). A tool added without an example call
//! here fails the walk. Every declaration carries the four annotations.

use crate::ops_support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

use ops_support::{Client, issue_coupon};

fn manifest() -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/manifest/svc.json")
        .display()
        .to_string()
}

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" }, "complete": true } },
        "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "summary" } }
    })
}

/// The names `tools/list` publishes at `path`, after checking each declaration's shape.
async fn published(client: &Client, path: &str) -> BTreeSet<String> {
    let (_, _, body) = client.post(path, "tools/list", json!({})).await;
    let tools = body["result"]["tools"].as_array().expect("tools").clone();
    assert!(!tools.is_empty(), "{path}: {body}");
    tools
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap().to_owned();
            assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{name}");
            // MCP SDK clients (the TypeScript one) refuse a `tools/list` with boolean subschemas.
            assert_no_boolean_properties(&name, &tool["outputSchema"]);
            // Clients that validate with ajv (the TypeScript SDK's) warn on every `tools/list`
            // about a format they do not know (schemars' `uint32`, `int64`, ...).
            for schema in ["inputSchema", "outputSchema"] {
                assert_standard_formats(&format!("{name} {schema}"), "#", &tool[schema]);
            }
            for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
                assert!(tool["annotations"][hint].is_boolean(), "{name}: {hint}");
            }
            name
        })
        .collect()
}

fn assert_no_boolean_properties(tool: &str, schema: &Value) {
    match schema {
        Value::Object(map) => {
            for (keyword, value) in map {
                if let ("properties", Value::Object(properties)) = (keyword.as_str(), value) {
                    for (property, subschema) in properties {
                        assert!(subschema.is_object(), "{tool}: property {property} is {subschema}");
                    }
                }
                assert_no_boolean_properties(tool, value);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| assert_no_boolean_properties(tool, item)),
        _ => {}
    }
}

/// The `format` values JSON Schema 2020-12 defines (section 7.3 of its validation vocabulary).
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Fails on a `format` outside [`STANDARD_FORMATS`] in `schema` or a subschema of it (only at
/// the keywords that hold schemas: a property named `format` is no keyword).
fn assert_standard_formats(tool: &str, at: &str, schema: &Value) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let Some(format) = map.get("format") {
        assert!(
            format.as_str().is_some_and(|f| STANDARD_FORMATS.contains(&f)),
            "{tool}: format {format} at {at}"
        );
    }
    for (keyword, value) in map {
        match (keyword.as_str(), value) {
            ("properties" | "patternProperties" | "$defs" | "definitions", Value::Object(members)) => {
                for (name, member) in members {
                    assert_standard_formats(tool, &format!("{at}/{keyword}/{name}"), member);
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                for (n, item) in items.iter().enumerate() {
                    assert_standard_formats(tool, &format!("{at}/{keyword}/{n}"), item);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems",
                subschema,
            ) => assert_standard_formats(tool, &format!("{at}/{keyword}"), subschema),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_agent_tool_answers_what_its_output_schema_says() {
    let app = TestApp::spawn_configured("tool_schemas_agent", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.blueprints.manifest = manifest();
    })
    .await
    .expect("sqlite");
    let listed = published(&Client::of(&app), "/mcp").await;
    let mut called = BTreeSet::new();
    let mut ok = async |tool: &str, arguments: Value| {
        called.insert(tool.to_owned());
        app.tool_ok(tool, arguments).await
    };

    let declined = ok(
        "svc_handshake",
        json!({ "intent": "broken", "blueprintDraft": { "contract": { "propsSpec": { "type": "string" } } } }),
    )
    .await;
    assert_eq!(declined["action"], "declined", "the declined body is checked too");
    let hs = ok(
        "svc_handshake",
        json!({ "intent": "schema walk", "blueprintDraft": { "contract": contract() } }),
    )
    .await;
    let rendered = ok(
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
    )
    .await;
    let session = rendered["sessionId"].clone();
    let s = json!({ "sessionId": session });
    ok("svc_consume", json!({ "sessionId": session, "timeout": 0 })).await;
    ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
    )
    .await;
    ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "merge", "patch": { "title": "v3" } }),
    )
    .await;
    ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "line" }),
    )
    .await;
    ok("svc_get_session", s.clone()).await;
    ok("svc_get_render_source", s.clone()).await;
    ok("svc_list_sessions", json!({})).await;
    ok("svc_list_gadgets", json!({})).await;
    ok("svc_list_themes", json!({})).await;
    ok("svc_list_featured_blueprints", json!({})).await;
    ok("svc_search_blueprints", json!({ "query": "order" })).await;
    ok("svc_render_blueprint", json!({ "blueprintId": "order-approval" })).await;
    ok("svc_runtime_refresh_ws_token", s.clone()).await;
    ok(
        "svc_runtime_sync_context",
        json!({ "sessionId": session, "context": { "tab": "lines" } }),
    )
    .await;

    assert_eq!(called, listed, "every published tool is called, and only those");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operator_tool_answers_what_its_output_schema_says() {
    let app = TestApp::spawn("tool_schemas_ops", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("sqlite");
    let ops = Client::of(&app);
    let listed = published(&ops, "/ops").await;
    let mut called = BTreeSet::new();
    let mut ok = async |tool: &str, arguments: Value| {
        called.insert(tool.to_owned());
        ops.ok(tool, arguments).await
    };

    let first = ok("svc_ops_list_apps", json!({})).await["apps"][0]["appId"].clone();
    let app_id = ok("svc_ops_create_app", json!({ "displayName": "Walk" })).await["appId"].clone();
    ok(
        "svc_ops_rename_app",
        json!({ "appId": app_id, "displayName": "Walked" }),
    )
    .await;
    ok(
        "svc_ops_update_app_system_prompt",
        json!({ "appId": app_id, "systemPrompt": "Be brief." }),
    )
    .await;
    ok("svc_ops_set_default_app", json!({ "appId": first })).await;
    ok("svc_ops_delete_app", json!({ "appId": app_id })).await;

    let org = ok("svc_ops_create_org", json!({ "name": "Walkers" })).await["orgId"].clone();
    ok("svc_ops_list_orgs", json!({})).await;
    let invite = ok(
        "svc_ops_invite_to_org",
        json!({ "orgId": org, "email": "walker@example.com", "role": "member" }),
    )
    .await["inviteId"]
        .clone();
    ok("svc_ops_revoke_invite", json!({ "inviteId": invite })).await;

    let key = ok("svc_ops_issue_connector_key", json!({ "name": "walk" })).await["id"].clone();
    ok("svc_ops_list_connector_keys", json!({})).await;
    ok("svc_ops_revoke_connector_key", json!({ "keyId": key })).await;

    let coupon = issue_coupon(&app.settings.database_url(), 500, None);
    ok("svc_ops_redeem_coupon", json!({ "couponCode": coupon })).await;

    let component = "export default function Card() { return <div>walk</div>; }";
    let registered = ok(
        "svc_ops_register_blueprint",
        json!({ "contract": contract(), "componentCode": component }),
    )
    .await;
    ok("svc_ops_generate_blueprint", json!({ "contract": contract() })).await;
    ok("svc_ops_list_blueprints", json!({})).await;
    ok(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": registered["blueprintId"], "isOperatorDefault": true }),
    )
    .await;
    ok(
        "svc_ops_delete_blueprint",
        json!({ "blueprintId": registered["blueprintId"] }),
    )
    .await;

    assert_eq!(called, listed, "every published tool is called, and only those");
}
