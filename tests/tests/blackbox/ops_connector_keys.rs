//! The connector-keys domain of `/ops`: issue (revealed once), list, revoke; issued keys on `/mcp`
//! and `/ops`; expiry; keys locked to an app; cross-tenant probes. On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::{Client, Tenants, app_with_prompt, assert_time, default_app_id};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_protocol::AGENT_SYSTEM_PROMPT;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    an_issued_key_is_revealed_once_and_works_on_mcp_and_ops,
    an_expired_key_does_not_authenticate,
    issue_arguments_are_validated,
    a_key_locked_to_an_app_is_scoped_to_it_and_sees_no_app_meta_tools,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    revoking_makes_the_next_request_401_and_keeps_the_row,
);

with_tenants!(another_users_keys_are_out_of_reach);

async fn issue(ops: &Client, arguments: Value) -> (Value, Client, String) {
    let issued = ops.ok("svc_ops_issue_connector_key", arguments).await;
    let plaintext = issued["plaintextKey"].as_str().unwrap().to_owned();
    let client = Client {
        bearer: Some(plaintext.clone()),
        ..ops.clone()
    };
    (issued, client, plaintext)
}

async fn an_issued_key_is_revealed_once_and_works_on_mcp_and_ops(app: TestApp) {
    let ops = Client::of(&app);
    assert_eq!(
        ops.ok("svc_ops_list_connector_keys", json!({})).await,
        json!({ "keys": [] })
    );
    let (issued, key, plaintext) = issue(&ops, json!({ "name": "laptop" })).await;
    let secret = plaintext.strip_prefix("svc_user_").expect("a svc_user_ secret");
    assert!(
        secret.len() >= 32 && secret.chars().all(|c| c.is_ascii_alphanumeric()),
        "{plaintext}"
    );
    assert_eq!(issued["apiKeyPrefix"], &secret[..8]);
    assert_eq!(issued["name"], "laptop");
    assert_eq!(issued["status"], "active");
    assert_time(&issued["createdAt"]);
    for absent in ["appId", "expiresAt", "lastUsedAt", "keyHash", "hash"] {
        assert!(issued.get(absent).is_none(), "{absent}: {issued}");
    }

    let listed = ops.ok("svc_ops_list_connector_keys", json!({})).await;
    let summary = &listed["keys"][0];
    assert_eq!(summary["id"], issued["id"]);
    assert!(summary.get("plaintextKey").is_none(), "never shown again: {summary}");
    assert!(!listed.to_string().contains(secret), "no secret in the listing");

    let (status, tools) = key.mcp("tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{tools}");
    assert!(tools["result"]["tools"].as_array().unwrap().len() > 5);
    let mine = key.ok("svc_ops_list_connector_keys", json!({})).await;
    assert_eq!(mine["keys"][0]["id"], issued["id"], "the key acts for its issuer");
    assert_time(&mine["keys"][0]["lastUsedAt"]);
}

async fn revoking_makes_the_next_request_401_and_keeps_the_row(app: TestApp) {
    let ops = Client::of(&app);
    let (issued, key, _) = issue(&ops, json!({})).await;
    assert!(issued.get("name").is_none());
    let (status, _) = key.mcp("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    let revoked = key
        .ok("svc_ops_revoke_connector_key", json!({ "keyId": issued["id"] }))
        .await;
    assert_eq!(
        revoked,
        json!({ "id": issued["id"], "status": "revoked", "alreadyRevoked": false })
    );
    for path in ["/mcp", "/ops"] {
        let (status, _, body) = key.post(path, "ping", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_eq!(body["error"]["code"], -32007);
    }
    let again = ops
        .ok("svc_ops_revoke_connector_key", json!({ "keyId": issued["id"] }))
        .await;
    assert_eq!(
        again,
        json!({ "id": issued["id"], "status": "revoked", "alreadyRevoked": true })
    );
    let listed = ops.ok("svc_ops_list_connector_keys", json!({})).await;
    assert_eq!(listed["keys"][0]["id"], issued["id"]);
    assert_eq!(listed["keys"][0]["status"], "revoked", "the row is kept");
    ops.refused(
        "svc_ops_revoke_connector_key",
        json!({ "keyId": "missing" }),
        "connector_key_not_found",
    )
    .await;
    ops.refused(
        "svc_ops_revoke_connector_key",
        json!({ "keyId": "svc_user_" }),
        "connector_key_not_found",
    )
    .await;
}

async fn an_expired_key_does_not_authenticate(app: TestApp) {
    let ops = Client::of(&app);
    let (past, expired, _) = issue(&ops, json!({ "expiresAt": "2020-01-01T00:00:00Z" })).await;
    assert_eq!(past["expiresAt"], "2020-01-01T00:00:00.000Z");
    let (status, _) = expired.mcp("ping", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = expired.ops("ping", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (future, live, _) = issue(&ops, json!({ "expiresAt": "2999-12-31T23:00:00+01:00" })).await;
    assert_eq!(future["expiresAt"], "2999-12-31T22:00:00.000Z");
    // ISO 8601 without an offset is UTC; a calendar date is its first instant.
    let (no_offset, _, _) = issue(&ops, json!({ "expiresAt": "2999-12-31T23:00:00" })).await;
    assert_eq!(no_offset["expiresAt"], "2999-12-31T23:00:00.000Z");
    let (date, _, _) = issue(&ops, json!({ "expiresAt": "2999-12-31" })).await;
    assert_eq!(date["expiresAt"], "2999-12-31T00:00:00.000Z");
    let (status, _) = live.mcp("ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);
}

async fn issue_arguments_are_validated(app: TestApp) {
    let ops = Client::of(&app);
    ops.invalid("svc_ops_issue_connector_key", json!({ "name": "" }), "name")
        .await;
    ops.invalid(
        "svc_ops_issue_connector_key",
        json!({ "name": "x".repeat(121) }),
        "name",
    )
    .await;
    ops.invalid("svc_ops_issue_connector_key", json!({ "name": "   " }), "name")
        .await;
    for bad in ["tomorrow", "2026-13-01T00:00:00Z", "2026-02-30", "31/12/2026"] {
        ops.invalid("svc_ops_issue_connector_key", json!({ "expiresAt": bad }), "expiresAt")
            .await;
    }
    let (issued, _, _) = issue(&ops, json!({ "name": "é".repeat(120) })).await;
    assert_eq!(issued["name"].as_str().unwrap().chars().count(), 120);
    // The limit counts the trimmed name: padding past 120 characters is not refused.
    let (padded, _, _) = issue(&ops, json!({ "name": format!("  {}  ", "é".repeat(120)) })).await;
    assert_eq!(padded["name"], "é".repeat(120));
    ops.refused(
        "svc_ops_issue_connector_key",
        json!({ "appId": "missing" }),
        "app_not_found",
    )
    .await;
    ops.invalid("svc_ops_revoke_connector_key", json!({}), "arguments")
        .await;
    assert_eq!(
        ops.ok("svc_ops_list_connector_keys", json!({})).await["keys"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn a_key_locked_to_an_app_is_scoped_to_it_and_sees_no_app_meta_tools(app: TestApp) {
    let ops = Client::of(&app);
    let shop = app_with_prompt(&ops, "Shop", "You run the shop.").await;
    let (issued, locked, _) = issue(&ops, json!({ "name": "shop agent", "appId": shop })).await;
    assert_eq!(issued["appId"], shop);

    assert_eq!(
        locked.mcp_instructions().await,
        format!("{AGENT_SYSTEM_PROMPT}\n\nYou run the shop."),
        "/mcp sessions of a locked key live in its app"
    );
    assert_eq!(
        ops.mcp_instructions().await,
        AGENT_SYSTEM_PROMPT,
        "a universal key: the default app"
    );

    let visible = locked.ops_tool_names().await;
    assert!(!visible.iter().any(|n| n == "svc_ops_list_apps"), "{visible:?}");
    assert!(visible.iter().any(|n| n == "svc_ops_list_connector_keys"));
    assert!(ops.ops_tool_names().await.iter().any(|n| n == "svc_ops_list_apps"));
    let hidden = locked.call("svc_ops_list_apps", json!({})).await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");

    let (child, _, _) = issue(&locked, json!({ "name": "child" })).await;
    assert_eq!(child["appId"], shop, "a locked key issues keys locked to its app");
    let default = default_app_id(&ops).await;
    locked
        .refused(
            "svc_ops_issue_connector_key",
            json!({ "appId": default }),
            "app_not_found",
        )
        .await;
}

async fn another_users_keys_are_out_of_reach(t: Tenants) {
    let (issued, _, _) = issue(&t.owner, json!({ "name": "owner's" })).await;
    assert_eq!(
        t.other.ok("svc_ops_list_connector_keys", json!({})).await,
        json!({ "keys": [] })
    );
    t.other
        .refused(
            "svc_ops_revoke_connector_key",
            json!({ "keyId": issued["id"] }),
            "connector_key_access_denied",
        )
        .await;
    let owner_app = default_app_id(&t.owner).await;
    t.other
        .refused(
            "svc_ops_issue_connector_key",
            json!({ "appId": owner_app }),
            "app_not_found",
        )
        .await;
    let listed = t.owner.ok("svc_ops_list_connector_keys", json!({})).await;
    assert_eq!(
        listed["keys"][0]["status"], "active",
        "the foreign revoke changed nothing"
    );
    assert_eq!(listed["keys"].as_array().unwrap().len(), 1);
}
