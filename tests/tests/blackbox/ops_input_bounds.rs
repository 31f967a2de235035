//! Bounds of `/ops` beyond the blueprint texts (ops_blueprint_limits.rs): the listing's filters
//! and the update's variance refused where they arrive with -32602 naming the field, the merged
//! variance's field count, and the apps one owner may hold (`app_limit_reached`). On SQLite and
//! PostgreSQL.

use crate::ops_support;

use ops_support::Client;
use serde_json::{Map, Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    each_listing_filter_is_capped_where_it_arrives,
    a_variance_patch_and_the_merged_variance_are_capped,
    an_owner_at_the_cap_creates_no_more_apps,
);

/// `OWNER_APPS_MAX` and `VARIANCE_MAX_FIELDS` (docs/ops.md).
const OWNER_APPS_MAX: usize = 100;
const VARIANCE_MAX_FIELDS: usize = 32;

/// A refused value as the message quotes it: its JSON, cut to 100 characters and marked `…`.
fn quoted(value: &str) -> String {
    let json = json!(value).to_string();
    if json.chars().count() <= 100 {
        return json;
    }
    json.chars().take(100).collect::<String>() + "…"
}

async fn register(ops: &Client) -> String {
    let arguments = json!({ "contract": {}, "componentCode": "export default () => null;" });
    ops.ok("svc_ops_register_blueprint", arguments).await["blueprintId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn each_listing_filter_is_capped_where_it_arrives(app: TestApp) {
    let ops = Client::of(&app);
    register(&ops).await;
    let words: Vec<String> = (0..20).map(|i| format!("{}{i:02}", "w".repeat(198))).collect();
    let at_the_caps = json!({
        "contractHash": "a".repeat(64),
        "generator": "g".repeat(64),
        "persona": "é".repeat(200),
        "intentKeywords": words,
    });
    let page = ops.ok("svc_ops_list_blueprints", at_the_caps).await;
    assert_eq!(
        page["blueprints"],
        json!([]),
        "filters at their caps are taken (and match nothing)"
    );
    let mut too_many = words.clone();
    too_many.push("one more".into());
    let long = |c: &str, n: usize| c.repeat(n);
    for (arguments, field, expected) in [
        (
            json!({ "contractHash": long("a", 65) }),
            "contractHash",
            format!("{} is longer than 64 characters", quoted(&long("a", 65))),
        ),
        (
            json!({ "generator": long("g", 65) }),
            "generator",
            format!("{} is longer than 64 characters", quoted(&long("g", 65))),
        ),
        (
            json!({ "intentKeywords": ["ok", long("w", 201)] }),
            "intentKeywords.1",
            format!("{} is longer than 200 characters", quoted(&long("w", 201))),
        ),
    ] {
        let message = ops.invalid("svc_ops_list_blueprints", arguments, field).await;
        assert_eq!(message, format!("Invalid params: {field}: {expected}"));
    }
    // Arrays and long texts are quoted as an excerpt too: the rule ends the message.
    for (arguments, field, rule) in [
        (
            json!({ "persona": long("é", 201) }),
            "persona",
            "is longer than 200 characters",
        ),
        (
            json!({ "intentKeywords": too_many }),
            "intentKeywords",
            "has more than 20 items",
        ),
        (
            json!({ "cursor": long("c", 513) }),
            "cursor",
            "is longer than 512 characters",
        ),
    ] {
        let message = ops.invalid("svc_ops_list_blueprints", arguments, field).await;
        assert!(message.ends_with(rule), "{message}");
    }
}

async fn a_variance_patch_and_the_merged_variance_are_capped(app: TestApp) {
    let ops = Client::of(&app);
    let id = register(&ops).await;
    let update = |variance: Value| json!({ "blueprintId": id, "variance": variance });
    for (variance, field, expected) in [
        (
            json!({ "tone": "é".repeat(201) }),
            "variance.tone",
            format!("{} is longer than 200 characters", quoted(&"é".repeat(201))),
        ),
        (
            json!({ "layout": { "nested": "document" } }),
            "variance.layout",
            r#"{"nested":"document"} is not of types "boolean", "number", "string""#.to_owned(),
        ),
    ] {
        let message = ops.invalid("svc_ops_update_blueprint", update(variance), field).await;
        assert_eq!(message, format!("Invalid params: {field}: {expected}"));
    }
    let fields =
        |from: usize, to: usize| -> Map<String, Value> { (from..to).map(|i| (format!("axis{i}"), json!(i))).collect() };
    let mut one_too_many = fields(0, VARIANCE_MAX_FIELDS + 1);
    let message = ops
        .invalid(
            "svc_ops_update_blueprint",
            update(Value::Object(one_too_many.clone())),
            "variance",
        )
        .await;
    assert!(message.ends_with("has more than 32 properties"), "{message}");
    let message = ops
        .invalid(
            "svc_ops_update_blueprint",
            update(json!({ "n".repeat(65): "x" })),
            "variance",
        )
        .await;
    assert!(message.ends_with("is longer than 64 characters"), "{message}");

    // Patches add up: the merged variance is capped too, and a refused patch changes nothing.
    ops.ok("svc_ops_update_blueprint", update(Value::Object(fields(0, 20))))
        .await;
    ops.ok(
        "svc_ops_update_blueprint",
        update(Value::Object(fields(20, VARIANCE_MAX_FIELDS))),
    )
    .await;
    let message = ops
        .invalid(
            "svc_ops_update_blueprint",
            update(json!({ "axis99": "on" })),
            "variance",
        )
        .await;
    assert_eq!(
        message,
        "Invalid params: variance: the merged variance would hold 33 fields, the most it may hold is 32: clear some with an empty string"
    );
    let listed = ops.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(
        listed["blueprints"][0]["variance"],
        Value::Object(fields(0, VARIANCE_MAX_FIELDS))
    );
    one_too_many.clear();
    one_too_many.insert("axis0".into(), json!(""));
    one_too_many.insert("axis99".into(), json!("on"));
    ops.ok("svc_ops_update_blueprint", update(Value::Object(one_too_many)))
        .await;
}

async fn an_owner_at_the_cap_creates_no_more_apps(app: TestApp) {
    let ops = Client::of(&app);
    // The default app is one of them.
    let listed = ops.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(listed["apps"].as_array().unwrap().len(), 1);
    let mut last = String::new();
    for i in 1..OWNER_APPS_MAX {
        let created = ops
            .ok("svc_ops_create_app", json!({ "displayName": format!("App {i}") }))
            .await;
        last = created["appId"].as_str().unwrap().to_owned();
    }
    let error = ops
        .refused(
            "svc_ops_create_app",
            json!({ "displayName": "One too many" }),
            "app_limit_reached",
        )
        .await;
    assert_eq!(
        error["message"],
        "you hold 100 apps, the most one may hold is 100: delete one first"
    );
    let listed = ops.ok("svc_ops_list_apps", json!({})).await;
    assert_eq!(
        listed["apps"].as_array().unwrap().len(),
        OWNER_APPS_MAX,
        "nothing was stored"
    );
    ops.ok("svc_ops_delete_app", json!({ "appId": last })).await;
    ops.ok("svc_ops_create_app", json!({ "displayName": "Room again" }))
        .await;
}
