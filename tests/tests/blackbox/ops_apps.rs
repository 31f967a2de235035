//! The apps domain of `/ops`: every tool, its limits and errors, cross-tenant probes, and the
//! system prompt reaching `/mcp` `initialize`. On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::{Client, Tenants, app_with_prompt, assert_time, default_app_id};
use serde_json::{Value, json};
use svc_protocol::AGENT_SYSTEM_PROMPT;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    the_default_app_is_listed_and_new_apps_get_minted_ids,
    names_are_1_to_120_characters,
    rename_and_system_prompt_update_the_record,
    the_system_prompt_reaches_mcp_initialize,
    missing_apps_are_app_not_found,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    set_default_moves_universal_keys,
    delete_is_idempotent_and_promotes_a_new_default,
    concurrent_first_requests_share_one_default_app,
);

with_tenants!(another_tenants_apps_behave_like_missing_ones);

fn ids(listed: &Value) -> Vec<String> {
    listed["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["appId"].as_str().unwrap().to_owned())
        .collect()
}

/// The caller's app `id` as `svc_ops_list_apps` shows it.
async fn stored_app(ops: &Client, id: &Value) -> Option<Value> {
    let listed = ops.ok("svc_ops_list_apps", json!({})).await;
    listed["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["appId"] == *id)
        .cloned()
}

fn assert_app_record(app: &Value) {
    let id = app["appId"].as_str().unwrap();
    assert_eq!(id.len(), 16, "{app}");
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric()), "base62: {id}");
    assert_time(&app["createdAt"]);
    assert_time(&app["updatedAt"]);
    let keys: Vec<&String> = app.as_object().unwrap().keys().collect();
    for key in &keys {
        assert!(
            ["appId", "displayName", "systemPrompt", "createdAt", "updatedAt"].contains(&key.as_str()),
            "AppRecord has no {key}: {app}"
        );
    }
}

async fn the_default_app_is_listed_and_new_apps_get_minted_ids(app: TestApp) {
    let ops = Client::of(&app);
    let listed = ops.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(listed["apps"].as_array().unwrap().len(), 1, "the default app: {listed}");
    assert_eq!(listed["apps"][0]["displayName"], "My app");
    assert_app_record(&listed["apps"][0]);

    let unnamed = ops.ok("svc_ops_create_app", json!({})).await;
    assert_app_record(&unnamed);
    assert_eq!(unnamed["displayName"], "My app");
    assert!(unnamed.get("systemPrompt").is_none());
    assert_eq!(unnamed["createdAt"], unnamed["updatedAt"]);

    let chosen = ops
        .ok(
            "svc_ops_create_app",
            json!({ "displayName": "Shop", "appId": "mine-please" }),
        )
        .await;
    assert_ne!(chosen["appId"], "mine-please", "a caller-supplied id is never honoured");
    assert_app_record(&chosen);
    assert_eq!(chosen["displayName"], "Shop");

    let listed = ops.ok("svc_ops_list_apps", json!({})).await;
    let mut expected = ids(&listed)[..1].to_vec();
    expected.extend([
        unnamed["appId"].as_str().unwrap().to_owned(),
        chosen["appId"].as_str().unwrap().to_owned(),
    ]);
    assert_eq!(ids(&listed), expected, "oldest first");
    assert_eq!(listed["apps"][2], chosen, "the listing shows the stored record");
}

async fn names_are_1_to_120_characters(app: TestApp) {
    let ops = Client::of(&app);
    let longest = "é".repeat(120);
    let made = ops.ok("svc_ops_create_app", json!({ "displayName": longest })).await;
    assert_eq!(made["displayName"], longest.as_str());
    let id = made["appId"].clone();
    for bad in [String::new(), "x".repeat(121)] {
        ops.invalid("svc_ops_create_app", json!({ "displayName": bad }), "displayName")
            .await;
        ops.invalid(
            "svc_ops_rename_app",
            json!({ "appId": id, "displayName": bad }),
            "displayName",
        )
        .await;
    }
    ops.invalid("svc_ops_create_app", json!({ "displayName": "   " }), "displayName")
        .await;
    ops.invalid(
        "svc_ops_rename_app",
        json!({ "appId": id, "displayName": 5 }),
        "displayName",
    )
    .await;
    // The limit counts the trimmed name: padding past 120 characters is not refused.
    let padded = format!("  {longest}\t ");
    let renamed = ops
        .ok("svc_ops_rename_app", json!({ "appId": id, "displayName": padded }))
        .await;
    assert_eq!(renamed["displayName"], longest.as_str());
    let trimmed = ops
        .ok("svc_ops_rename_app", json!({ "appId": id, "displayName": "  Shop  " }))
        .await;
    assert_eq!(trimmed["displayName"], "Shop");
    assert_eq!(
        ops.ok("svc_ops_list_apps", json!({})).await["apps"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn rename_and_system_prompt_update_the_record(app: TestApp) {
    let ops = Client::of(&app);
    let made = ops.ok("svc_ops_create_app", json!({ "displayName": "Old" })).await;
    let id = made["appId"].clone();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let renamed = ops
        .ok("svc_ops_rename_app", json!({ "appId": id, "displayName": "New" }))
        .await;
    assert_eq!(renamed["appId"], id);
    assert_eq!(renamed["displayName"], "New");
    assert_eq!(renamed["createdAt"], made["createdAt"]);
    assert!(renamed["updatedAt"].as_str() > made["updatedAt"].as_str());

    let longest = "p".repeat(10_000);
    let prompted = ops
        .ok(
            "svc_ops_update_app_system_prompt",
            json!({ "appId": id, "systemPrompt": longest }),
        )
        .await;
    assert_eq!(prompted["systemPrompt"], longest.as_str());
    assert_eq!(prompted["displayName"], "New");
    ops.invalid(
        "svc_ops_update_app_system_prompt",
        json!({ "appId": id, "systemPrompt": "p".repeat(10_001) }),
        "systemPrompt",
    )
    .await;
    ops.invalid("svc_ops_update_app_system_prompt", json!({ "appId": id }), "arguments")
        .await;
    let stored = stored_app(&ops, &id).await.unwrap();
    assert_eq!(
        stored["systemPrompt"],
        longest.as_str(),
        "the refused update changed nothing"
    );

    let cleared = ops
        .ok(
            "svc_ops_update_app_system_prompt",
            json!({ "appId": id, "systemPrompt": "" }),
        )
        .await;
    assert!(cleared.get("systemPrompt").is_none(), "omitted when cleared: {cleared}");
    let stored = stored_app(&ops, &id).await.unwrap();
    assert!(stored.get("systemPrompt").is_none(), "{stored}");
}

async fn the_system_prompt_reaches_mcp_initialize(app: TestApp) {
    let ops = Client::of(&app);
    assert_eq!(ops.mcp_instructions().await, AGENT_SYSTEM_PROMPT);
    let default = default_app_id(&ops).await;
    ops.ok(
        "svc_ops_update_app_system_prompt",
        json!({ "appId": default, "systemPrompt": "Always answer in French." }),
    )
    .await;
    assert_eq!(
        ops.mcp_instructions().await,
        format!("{AGENT_SYSTEM_PROMPT}\n\nAlways answer in French.")
    );
    ops.ok(
        "svc_ops_update_app_system_prompt",
        json!({ "appId": default, "systemPrompt": "" }),
    )
    .await;
    assert_eq!(ops.mcp_instructions().await, AGENT_SYSTEM_PROMPT, "cleared");
}

async fn set_default_moves_universal_keys(app: TestApp) {
    let ops = Client::of(&app);
    let first = default_app_id(&ops).await;
    let second = app_with_prompt(&ops, "Second", "I am the second app.").await;
    assert_eq!(ops.mcp_instructions().await, AGENT_SYSTEM_PROMPT, "still the first app");
    let set = ops.ok("svc_ops_set_default_app", json!({ "appId": second })).await;
    assert_eq!(set, json!({ "defaultAppId": second }));
    assert!(ops.mcp_instructions().await.ends_with("I am the second app."));
    let again = ops.ok("svc_ops_set_default_app", json!({ "appId": second })).await;
    assert_eq!(again, json!({ "defaultAppId": second }), "idempotent");
    ops.ok("svc_ops_set_default_app", json!({ "appId": first })).await;
    assert_eq!(ops.mcp_instructions().await, AGENT_SYSTEM_PROMPT);
}

async fn delete_is_idempotent_and_promotes_a_new_default(app: TestApp) {
    let ops = Client::of(&app);
    let first = default_app_id(&ops).await;
    let second = app_with_prompt(&ops, "Second", "Second speaking.").await;
    for _ in 0..2 {
        assert_eq!(
            ops.ok("svc_ops_delete_app", json!({ "appId": first })).await,
            json!({ "deleted": true })
        );
    }
    assert_eq!(
        ops.ok("svc_ops_delete_app", json!({ "appId": "never-existed" })).await,
        json!({ "deleted": true })
    );
    assert_eq!(
        ids(&ops.ok("svc_ops_list_apps", json!({})).await),
        vec![second.as_str().unwrap().to_owned()]
    );
    assert!(
        ops.mcp_instructions().await.ends_with("Second speaking."),
        "the oldest remaining app became the default"
    );
    ops.refused(
        "svc_ops_rename_app",
        json!({ "appId": first, "displayName": "x" }),
        "app_not_found",
    )
    .await;
}

/// The tools that answer `app_not_found` for an app the caller does not own, aimed at `id`.
fn app_probes(id: &Value) -> [(&'static str, Value); 3] {
    [
        ("svc_ops_rename_app", json!({ "appId": id, "displayName": "Stolen" })),
        ("svc_ops_set_default_app", json!({ "appId": id })),
        (
            "svc_ops_update_app_system_prompt",
            json!({ "appId": id, "systemPrompt": "pwned" }),
        ),
    ]
}

async fn missing_apps_are_app_not_found(app: TestApp) {
    let ops = Client::of(&app);
    for id in ["missing", ""] {
        for (tool, args) in app_probes(&json!(id)) {
            ops.refused(tool, args, "app_not_found").await;
        }
    }
}

async fn another_tenants_apps_behave_like_missing_ones(t: Tenants) {
    let mine = t
        .owner
        .ok("svc_ops_create_app", json!({ "displayName": "Owner's" }))
        .await;
    let id = mine["appId"].clone();
    let theirs = t.other.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(
        theirs["apps"].as_array().unwrap().len(),
        1,
        "only their own default: {theirs}"
    );
    assert_ne!(theirs["apps"][0]["appId"], id);

    for (tool, args) in app_probes(&id) {
        let foreign = t.other.refused(tool, args.clone(), "app_not_found").await;
        let mut missing_args = args.clone();
        missing_args["appId"] = json!("missing");
        let missing = t.other.refused(tool, missing_args, "app_not_found").await;
        assert_eq!(foreign, missing, "{tool}: the same shape as a missing id");
    }
    assert_eq!(
        t.other.ok("svc_ops_delete_app", json!({ "appId": id })).await,
        json!({ "deleted": true })
    );
    let kept = stored_app(&t.owner, &id).await;
    assert_eq!(kept, Some(mine), "the foreign delete touched nothing");
}

/// A new identity's first requests race to create its default app; every one of them must land
/// in the same app, or their writes would be scoped to an app nobody sees again.
async fn concurrent_first_requests_share_one_default_app(app: TestApp) {
    let ops = Client::of(&app);
    let renders = (0..20).map(|i| {
        let ops = ops.clone();
        async move {
            let arguments = json!({ "intent": format!("first card {i}"), "blueprintDraft": { "contract": {} } });
            let (status, body) = ops
                .mcp("tools/call", json!({ "name": "svc_handshake", "arguments": arguments }))
                .await;
            assert_eq!(status, reqwest::StatusCode::OK, "{body}");
        }
    });
    futures_util::future::join_all(renders).await;
    let apps = ops.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(apps["apps"].as_array().unwrap().len(), 1, "one default app: {apps}");
}
