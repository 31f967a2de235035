//! `/ops` as a route: the bearer check of `/mcp`, JSON-RPC envelopes, the tools each wiring
//! lists, and its disjointness from `/mcp`. On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::Client;
use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    every_self_hosted_tool_is_listed_by_default,
    ops_and_mcp_are_disjoint,
    envelopes_are_handled_like_on_mcp,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    the_bearer_check_is_the_one_of_mcp,
);

const APP_TOOLS: [&str; 6] = [
    "svc_ops_list_apps",
    "svc_ops_create_app",
    "svc_ops_rename_app",
    "svc_ops_delete_app",
    "svc_ops_set_default_app",
    "svc_ops_update_app_system_prompt",
];
const ORG_TOOLS: [&str; 4] = [
    "svc_ops_list_orgs",
    "svc_ops_create_org",
    "svc_ops_invite_to_org",
    "svc_ops_revoke_invite",
];
const KEY_TOOLS: [&str; 3] = [
    "svc_ops_list_connector_keys",
    "svc_ops_issue_connector_key",
    "svc_ops_revoke_connector_key",
];
const COUPON_TOOLS: [&str; 1] = ["svc_ops_redeem_coupon"];
const BLUEPRINT_TOOLS: [&str; 5] = [
    "svc_ops_generate_blueprint",
    "svc_ops_register_blueprint",
    "svc_ops_list_blueprints",
    "svc_ops_update_blueprint",
    "svc_ops_delete_blueprint",
];
/// Every tool a self-hosted server wires by default.
const ALL_TOOLS: usize =
    APP_TOOLS.len() + ORG_TOOLS.len() + KEY_TOOLS.len() + COUPON_TOOLS.len() + BLUEPRINT_TOOLS.len();

async fn the_bearer_check_is_the_one_of_mcp(app: TestApp) {
    for client in [
        Client::anonymous(&app),
        Client::with_bearer(&app, "svc_user_notakey0000000000000000000000000000"),
    ] {
        let (status, headers, body) = client.post("/ops", "tools/list", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], -32007);
        assert!(headers["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    }
    let (status, _) = Client::of(&app).ops("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let get = app.client.get(format!("{}/ops", app.base)).send().await.unwrap();
    assert_eq!(get.status(), StatusCode::UNAUTHORIZED, "GET without a bearer");
    let get = app
        .client
        .get(format!("{}/ops", app.base))
        .bearer_auth(&app.bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn every_self_hosted_tool_is_listed_by_default(app: TestApp) {
    let ops = Client::of(&app);
    let (status, body) = ops.ops("initialize", json!({ "protocolVersion": "2025-06-18" })).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert!(body["result"]["capabilities"]["tools"].is_object(), "{body}");
    let names = ops.ops_tool_names().await;
    let expected: Vec<&str> = APP_TOOLS
        .iter()
        .chain(&ORG_TOOLS)
        .chain(&KEY_TOOLS)
        .chain(&COUPON_TOOLS)
        .chain(&BLUEPRINT_TOOLS)
        .copied()
        .collect();
    assert_eq!(names, expected, "the 19 self-hosted tools; no provider keys or credits");
    let (_, body) = ops.ops("tools/list", json!({})).await;
    for tool in body["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    let hosted = ops.call("svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(
        hosted["error"]["code"], -32602,
        "hosted-only tools are absent: {hosted}"
    );
}

async fn ops_and_mcp_are_disjoint(app: TestApp) {
    let client = Client::of(&app);
    let (_, mcp_tools) = client.mcp("tools/list", json!({})).await;
    let mcp_names: Vec<&str> = mcp_tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(mcp_names.contains(&"svc_render"));
    assert!(mcp_names.iter().all(|n| !n.starts_with("svc_ops_")), "{mcp_names:?}");
    assert!(client.ops_tool_names().await.iter().all(|n| n.starts_with("svc_ops_")));
    let (_, body) = client
        .ops("tools/call", json!({ "name": "svc_list_themes", "arguments": {} }))
        .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (_, body) = client
        .mcp("tools/call", json!({ "name": "svc_ops_list_apps", "arguments": {} }))
        .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (_, body) = client.ops("resources/list", json!({})).await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
}

async fn envelopes_are_handled_like_on_mcp(app: TestApp) {
    let post = |body: String| {
        app.client
            .post(format!("{}/ops", app.base))
            .bearer_auth(&app.bearer)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let resp = post("{not json".into()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    let resp = post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let ops = Client::of(&app);
    let (_, body) = ops.ops("tools/call", json!({ "arguments": {} })).await;
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(body["id"], 7);
    let message = ops
        .invalid("svc_ops_rename_app", json!({ "displayName": "x" }), "arguments")
        .await;
    assert!(message.contains("appId"), "{message}");
}

async fn spawn_with(
    test: &str,
    backend: Backend,
    wire: impl FnOnce(&mut svc::settings::OpsSettings),
) -> Option<TestApp> {
    TestApp::spawn_configured(test, backend, Auth::Strict, |s| wire(&mut s.ops)).await
}

svc_tests::on_both_backends!(
    an_unwired_domain_is_absent,
    with_nothing_wired_the_route_mounts_without_tools
);

/// Turns one domain off.
type Unwire = fn(&mut svc::settings::OpsSettings);

async fn an_unwired_domain_is_absent(backend: Backend) {
    let rows: [(&str, Unwire, &[&str]); 5] = [
        ("apps_off", |o| o.apps = false, &APP_TOOLS),
        ("orgs_off", |o| o.orgs = false, &ORG_TOOLS),
        ("keys_off", |o| o.connector_keys = false, &KEY_TOOLS),
        ("coupons_off", |o| o.coupons = false, &COUPON_TOOLS),
        ("blueprints_off", |o| o.blueprints = false, &BLUEPRINT_TOOLS),
    ];
    for (name, wire, absent) in rows {
        let Some(app) = spawn_with(name, backend, wire).await else {
            return;
        };
        let ops = Client::of(&app);
        let names = ops.ops_tool_names().await;
        assert_eq!(names.len(), ALL_TOOLS - absent.len(), "{name}: {names:?}");
        for tool in absent {
            assert!(!names.iter().any(|n| n == tool), "{name}: {tool} listed");
            let body = ops.call(tool, json!({})).await;
            assert_eq!(body["error"]["code"], -32602, "{name}: {tool} callable: {body}");
        }
        let (_, init) = ops.ops("initialize", json!({})).await;
        assert!(init["result"]["capabilities"]["tools"].is_object());
    }
}

async fn with_nothing_wired_the_route_mounts_without_tools(backend: Backend) {
    let Some(app) = spawn_with("nothing_wired", backend, |o| {
        o.apps = false;
        o.orgs = false;
        o.connector_keys = false;
        o.coupons = false;
        o.blueprints = false;
    })
    .await
    else {
        return;
    };
    let ops = Client::of(&app);
    let (status, init) = ops.ops("initialize", json!({ "protocolVersion": "2025-03-26" })).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    assert!(init["result"]["capabilities"].get("tools").is_none(), "{init}");
    let (_, ping) = ops.ops("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    let (_, list) = ops.ops("tools/list", json!({})).await;
    assert_eq!(list["error"]["code"], -32601, "{list}");
    assert!(
        list["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Method not found")
    );
    let (_, call) = ops
        .ops("tools/call", json!({ "name": "svc_ops_list_apps", "arguments": {} }))
        .await;
    assert_eq!(call["error"]["code"], -32601, "{call}");
    let (status, _) = Client::anonymous(&app).ops("tools/list", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "still behind the bearer check");
}
