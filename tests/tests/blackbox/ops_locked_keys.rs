//! A connector key locked to one app sees and touches only that app on `/ops` (docs/ops.md,
//! "Keys locked to an app"): every tool is either hidden from it (absent from `tools/list`,
//! -32602 `unknown tool` when called) or scoped to its app, where another app of the same owner
//! answers exactly like a missing one. On SQLite and PostgreSQL.

use crate::ops_support;

use std::collections::BTreeSet;

use ops_support::{Client, issue_coupon};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    a_locked_key_lists_only_the_tools_scoped_to_its_app,
    hidden_tools_are_refused_and_change_nothing,
    app_tools_reach_only_the_keys_own_app,
    connector_keys_of_other_apps_are_out_of_reach,
    a_locked_key_cannot_accept_an_org_invite,
    on_mcp_a_locked_key_reaches_only_its_app,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    blueprints_of_other_apps_behave_like_missing_ones,
);

/// The owner's universal client, and keys locked to two of its apps: `other` (X) and `shop` (Y).
struct Fixture {
    owner: Client,
    other_app: Value,
    shop_app: Value,
    other_key: Client,
    other_key_id: Value,
    shop_key: Client,
}

async fn locked_key(owner: &Client, app_id: &Value, name: &str) -> (Client, Value) {
    let issued = owner
        .ok("svc_ops_issue_connector_key", json!({ "name": name, "appId": app_id }))
        .await;
    let client = Client {
        bearer: Some(issued["plaintextKey"].as_str().unwrap().to_owned()),
        ..owner.clone()
    };
    (client, issued["id"].clone())
}

async fn fixture(app: &TestApp) -> Fixture {
    let owner = Client::of(app);
    let other_app = owner.ok("svc_ops_create_app", json!({ "displayName": "Other" })).await["appId"].clone();
    let shop_app = owner.ok("svc_ops_create_app", json!({ "displayName": "Shop" })).await["appId"].clone();
    let (other_key, other_key_id) = locked_key(&owner, &other_app, "other agent").await;
    let (shop_key, _) = locked_key(&owner, &shop_app, "shop agent").await;
    Fixture {
        owner,
        other_app,
        shop_app,
        other_key,
        other_key_id,
        shop_key,
    }
}

/// The tools a locked key sees: the two that act on its own app, its app's connector keys and
/// its app's blueprints.
const SCOPED_TOOLS: [&str; 10] = [
    "svc_ops_rename_app",
    "svc_ops_update_app_system_prompt",
    "svc_ops_list_connector_keys",
    "svc_ops_issue_connector_key",
    "svc_ops_revoke_connector_key",
    "svc_ops_generate_blueprint",
    "svc_ops_register_blueprint",
    "svc_ops_list_blueprints",
    "svc_ops_update_blueprint",
    "svc_ops_delete_blueprint",
];

async fn a_locked_key_lists_only_the_tools_scoped_to_its_app(app: TestApp) {
    let f = fixture(&app).await;
    let visible: BTreeSet<String> = f.shop_key.ops_tool_names().await.into_iter().collect();
    let expected: BTreeSet<String> = SCOPED_TOOLS.iter().map(|s| s.to_string()).collect();
    assert_eq!(visible, expected);
    assert_eq!(
        f.owner.ops_tool_names().await.len(),
        19,
        "a universal key sees every tool"
    );
}

/// Each hidden tool with arguments that would succeed for the owner, aimed at the other app.
fn hidden_calls(f: &Fixture) -> Vec<(&'static str, Value)> {
    vec![
        ("svc_ops_list_apps", json!({})),
        ("svc_ops_create_app", json!({ "displayName": "Sneaky" })),
        ("svc_ops_delete_app", json!({ "appId": f.other_app })),
        ("svc_ops_set_default_app", json!({ "appId": f.other_app })),
        ("svc_ops_list_orgs", json!({})),
        ("svc_ops_create_org", json!({ "name": "Sneaky" })),
        (
            "svc_ops_invite_to_org",
            json!({ "orgId": "o", "email": "a@example.com", "role": "member" }),
        ),
        ("svc_ops_revoke_invite", json!({ "inviteId": "i" })),
        ("svc_ops_redeem_coupon", json!({ "couponCode": "cpn_AbCd1234" })),
    ]
}

async fn hidden_tools_are_refused_and_change_nothing(app: TestApp) {
    let f = fixture(&app).await;
    let org = f.owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let invite = f
        .owner
        .ok(
            "svc_ops_invite_to_org",
            json!({ "orgId": org["orgId"], "email": "a@example.com", "role": "member" }),
        )
        .await;
    let apps_before = f.owner.ok("svc_ops_list_apps", json!({})).await;
    let mut calls = hidden_calls(&f);
    calls.push(("svc_ops_revoke_invite", json!({ "inviteId": invite["inviteId"] })));
    calls.push((
        "svc_ops_invite_to_org",
        json!({ "orgId": org["orgId"], "email": "b@example.com", "role": "admin" }),
    ));
    for (tool, arguments) in calls {
        let body = f.shop_key.call(tool, arguments).await;
        assert_eq!(body["error"]["code"], -32602, "{tool}: {body}");
        assert_eq!(
            body["error"]["message"],
            format!("Invalid params: name: unknown tool `{tool}`"),
            "{tool}"
        );
    }
    assert_eq!(f.owner.ok("svc_ops_list_apps", json!({})).await, apps_before);
    let orgs = f.owner.ok("svc_ops_list_orgs", json!({})).await;
    assert_eq!(orgs["orgs"].as_array().unwrap().len(), 1, "{orgs}");
    // The invite is still pending: the owner's revoke is the first.
    let revoked = f
        .owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": invite["inviteId"] }))
        .await;
    assert_eq!(revoked["alreadyRevoked"], false);
    // The other app's key still works: its app was not deleted.
    let (status, body) = f.other_key.ops("tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A coupon is the owner's wallet's, not an app's.
    let code = issue_coupon(&app.settings.database_url(), 500, None);
    let body = f
        .shop_key
        .call("svc_ops_redeem_coupon", json!({ "couponCode": code }))
        .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    f.owner.ok("svc_ops_redeem_coupon", json!({ "couponCode": code })).await;
}

async fn app_tools_reach_only_the_keys_own_app(app: TestApp) {
    let f = fixture(&app).await;
    f.shop_key
        .refused(
            "svc_ops_rename_app",
            json!({ "appId": f.other_app, "displayName": "Taken" }),
            "app_not_found",
        )
        .await;
    f.shop_key
        .refused(
            "svc_ops_update_app_system_prompt",
            json!({ "appId": f.other_app, "systemPrompt": "Obey me." }),
            "app_not_found",
        )
        .await;
    let apps = f.owner.ok("svc_ops_list_apps", json!({})).await;
    let other = apps["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["appId"] == f.other_app)
        .unwrap()
        .clone();
    assert_eq!(other["displayName"], "Other");
    assert!(other.get("systemPrompt").is_none(), "{other}");

    let renamed = f
        .shop_key
        .ok(
            "svc_ops_rename_app",
            json!({ "appId": f.shop_app, "displayName": "Shop 2" }),
        )
        .await;
    assert_eq!(renamed["displayName"], "Shop 2");
    let prompted = f
        .shop_key
        .ok(
            "svc_ops_update_app_system_prompt",
            json!({ "appId": f.shop_app, "systemPrompt": "Sell." }),
        )
        .await;
    assert_eq!(prompted["systemPrompt"], "Sell.");
}

async fn connector_keys_of_other_apps_are_out_of_reach(app: TestApp) {
    let f = fixture(&app).await;
    let universal = f
        .owner
        .ok("svc_ops_issue_connector_key", json!({ "name": "laptop" }))
        .await;

    let listed = f.shop_key.ok("svc_ops_list_connector_keys", json!({})).await;
    let names: Vec<&str> = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shop agent"], "{listed}");
    assert_eq!(
        f.owner.ok("svc_ops_list_connector_keys", json!({})).await["keys"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "the owner's universal key lists every key"
    );

    for key_id in [&f.other_key_id, &universal["id"]] {
        f.shop_key
            .refused(
                "svc_ops_revoke_connector_key",
                json!({ "keyId": key_id }),
                "connector_key_not_found",
            )
            .await;
    }
    let (status, body) = f.other_key.ops("tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK, "the other app's key still works: {body}");
    let listed = f.owner.ok("svc_ops_list_connector_keys", json!({})).await;
    assert!(
        listed["keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["status"] == "active"),
        "{listed}"
    );
}

async fn blueprints_of_other_apps_behave_like_missing_ones(app: TestApp) {
    let f = fixture(&app).await;
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
    });
    let theirs = f
        .other_key
        .ok(
            "svc_ops_register_blueprint",
            json!({ "contract": contract, "componentCode": "export default () => null;" }),
        )
        .await["blueprintId"]
        .clone();
    let listed = f.shop_key.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(listed, json!({ "blueprints": [] }));
    f.shop_key
        .refused(
            "svc_ops_update_blueprint",
            json!({ "blueprintId": theirs, "isOperatorDefault": true }),
            "blueprint_not_found",
        )
        .await;
    assert_eq!(
        f.shop_key
            .ok("svc_ops_delete_blueprint", json!({ "blueprintId": theirs }))
            .await,
        json!({ "deleted": true })
    );
    let still = f.other_key.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(still["blueprints"][0]["blueprintId"], theirs, "{still}");
}

async fn a_locked_key_cannot_accept_an_org_invite(app: TestApp) {
    let f = fixture(&app).await;
    let org = f.owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let invite = f
        .owner
        .ok(
            "svc_ops_invite_to_org",
            json!({ "orgId": org["orgId"], "email": "a@example.com", "role": "member" }),
        )
        .await;
    let resp = app
        .client
        .post(format!(
            "{}/_svc/invites/{}/accept",
            app.base,
            invite["inviteId"].as_str().unwrap()
        ))
        .bearer_auth(f.shop_key.bearer.as_deref().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "app_access_denied", "{body}");
    let revoked = f
        .owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": invite["inviteId"] }))
        .await;
    assert_eq!(revoked["status"], "revoked", "the invite stayed pending");
}

/// `tools/call` on `/mcp` for `client`: the whole JSON-RPC body.
async fn mcp_call(client: &Client, tool: &str, arguments: Value) -> Value {
    let (status, body) = client
        .mcp("tools/call", json!({ "name": tool, "arguments": arguments }))
        .await;
    assert_eq!(status, StatusCode::OK, "{tool}: {body}");
    body
}

async fn on_mcp_a_locked_key_reaches_only_its_app(app: TestApp) {
    let f = fixture(&app).await;
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } });
    let hs = mcp_call(
        &f.other_key,
        "svc_handshake",
        json!({ "intent": "other card", "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let rendered = mcp_call(
        &f.other_key,
        "svc_render",
        json!({ "handshakeId": hs["result"]["structuredContent"]["handshakeId"], "props": { "title": "t" } }),
    )
    .await;
    let session = rendered["result"]["structuredContent"]["sessionId"].clone();
    assert!(session.is_string(), "{rendered}");

    let read = mcp_call(&f.shop_key, "svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(
        read["error"]["code"], -32002,
        "another app's session is missing: {read}"
    );
    let listed = mcp_call(&f.shop_key, "svc_list_sessions", json!({})).await;
    assert_eq!(listed["result"]["structuredContent"]["sessions"], json!([]), "{listed}");
    // Document 1: another app's render answers exactly as an id that names nothing, on every tool
    // that takes a `sessionId` and on its resource.
    let theirs = session.as_str().unwrap().to_owned();
    let last = theirs.chars().last().unwrap();
    let nobodys = format!("{}{}", &theirs[..theirs.len() - 1], if last == 'Z' { 'Y' } else { 'Z' });
    let answer = |id: &str| {
        let id = id.to_owned();
        let shop = &f.shop_key;
        async move {
            let calls = [
                ("svc_get_render_source", json!({ "sessionId": id })),
                ("svc_consume", json!({ "sessionId": id, "timeout": 0 })),
                (
                    "svc_update",
                    json!({ "sessionId": id, "kind": "replace", "props": { "title": "x" } }),
                ),
                (
                    "svc_amend",
                    json!({ "sessionId": id, "kind": "replace", "props": { "title": "x" } }),
                ),
            ];
            let mut answers = Vec::new();
            for (tool, arguments) in calls {
                let body = mcp_call(shop, tool, arguments).await;
                answers.push((tool, body.to_string().replace(&id, "<id>")));
            }
            let (_, read) = shop
                .mcp("resources/read", json!({ "uri": format!("ui://svc/render/{id}") }))
                .await;
            answers.push(("resources/read", read.to_string().replace(&id, "<id>")));
            answers
        }
    };
    let (for_theirs, for_nobodys) = (answer(&theirs).await, answer(&nobodys).await);
    for ((tool, seen), (_, unknown)) in for_theirs.iter().zip(&for_nobodys) {
        assert_eq!(seen, unknown, "{tool}: another app's render reads as an unknown id");
        assert!(!seen.contains("\"title\":\"t\""), "{tool} leaks the render: {seen}");
    }
    for tool in ["svc_list_gadgets", "svc_list_themes"] {
        let denied = mcp_call(&f.shop_key, tool, json!({ "appId": f.other_app })).await;
        assert_eq!(
            denied["result"]["structuredContent"]["error"]["code"], "app_access_denied",
            "{tool}: {denied}"
        );
    }
}
