//! Bounds of `/ops` beyond the blueprint texts (ops_blueprint_limits.rs): the listing's filters
//! and the update's variance refused where they arrive with -32602 naming the field, the merged
//! variance's field count, the apps one owner may hold (`app_limit_reached`), and a blueprint's
//! contract counted as an agent's draft is (docs/agent-api.md, "Bounds of a draft"). On SQLite and
//! PostgreSQL.

use crate::ops_support;

use ops_support::Client;
use serde_json::{Map, Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    each_listing_filter_is_capped_where_it_arrives,
    a_variance_patch_and_the_merged_variance_are_capped,
    an_owner_at_the_cap_creates_no_more_apps,
    a_blueprint_contract_is_capped_as_an_agent_draft_is,
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

/// Any refused value as the message quotes it.
fn quoted_json(value: &Value) -> String {
    let json = value.to_string();
    json.chars().take(100).collect::<String>() + if json.chars().count() > 100 { "…" } else { "" }
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

/// The tools that take a contract, and the counts of `svc_domain::contract::draft_limits`.
const BLUEPRINT_TOOLS: [&str; 2] = ["svc_ops_register_blueprint", "svc_ops_generate_blueprint"];

fn named(count: usize, name: impl Fn(usize) -> String, value: impl Fn(usize) -> Value) -> Map<String, Value> {
    (0..count).map(|i| (name(i), value(i))).collect()
}

/// Every count at its cap: 16 top-level keys, 64 actions, channels and slots (the first with 16
/// keys), 16 keys in each capabilities object, 64 gadget packages and 64 tools, with long names.
fn contract_at_the_caps() -> Value {
    let section =
        |prefix: &'static str, entry: Value| named(64, move |i| format!("{prefix}{i}"), move |_| entry.clone());
    let mut actions = section("act", json!({ "schema": { "type": "string" } }));
    actions["act0"] = Value::Object(named(15, |i| format!("k{i}"), |_| json!({})));
    actions["act0"]["schema"] = json!({ "type": "string" });
    let mut client = named(15, |i| format!("extra{i}"), |_| json!(true));
    client.insert(
        "gadgets".into(),
        Value::Object(named(
            64,
            |i| format!("@acme/{}{i:02}", "p".repeat(206)),
            |_| json!("v".repeat(128)),
        )),
    );
    let mut agent = named(15, |i| format!("extra{i}"), |_| json!(true));
    agent.insert(
        "tools".into(),
        json!(
            (0..64)
                .map(|i| format!("{}{i:02}", "t".repeat(126)))
                .collect::<Vec<_>>()
        ),
    );
    let mut contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "actionSpec": actions,
        "streamSpec": section("chan", json!({ "mode": "append", "schema": { "type": "string" } })),
        "contextSpec": section("slot", json!({ "schema": { "type": "string" } })),
        "clientCapabilities": client,
        "agentCapabilities": agent,
    });
    for i in 0..10 {
        contract[format!("x-extra{i}")] = json!(i);
    }
    assert_eq!(contract.as_object().unwrap().len(), 16);
    contract
}

fn blueprint_arguments(tool: &str, contract: Value) -> Value {
    let mut arguments = json!({ "contract": contract });
    if tool == "svc_ops_register_blueprint" {
        arguments["componentCode"] = json!("export default () => null;");
    }
    arguments
}

async fn a_blueprint_contract_is_capped_as_an_agent_draft_is(app: TestApp) {
    let ops = Client::of(&app);
    // The published schemas state the agent draft's counts.
    let (_, listed) = ops.ops("tools/list", json!({})).await;
    let (_, agent) = ops.mcp("tools/list", json!({})).await;
    let handshake = agent["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{agent}"))
        .iter()
        .find(|t| t["name"] == "svc_handshake")
        .unwrap()["inputSchema"]
        .clone();
    let drafted = &handshake["$defs"]["BlueprintDraft"]["properties"]["contract"];
    for tool in BLUEPRINT_TOOLS {
        let declared = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap_or_else(|| panic!("{tool} is listed"));
        let contract = &declared["inputSchema"]["properties"]["contract"];
        assert_eq!(contract["maxProperties"], 16, "{tool}: {contract}");
        assert_eq!(contract["properties"]["actionSpec"]["maxProperties"], 64, "{tool}");
        for cap in ["type", "maxProperties", "properties"] {
            assert_eq!(contract[cap], drafted[cap], "{tool}: {cap} as svc_handshake's");
        }
    }

    // At every cap: stored as given.
    let register = "svc_ops_register_blueprint";
    let stored = ops
        .ok(register, blueprint_arguments(register, contract_at_the_caps()))
        .await;
    assert!(stored["blueprintId"].is_string(), "{stored}");
    // And generated, a part at its caps at a time (all at once, the built-in generator's card
    // would be over the `component_bytes` budget).
    let full = contract_at_the_caps();
    let parts = [
        "actionSpec",
        "streamSpec",
        "contextSpec",
        "clientCapabilities",
        "agentCapabilities",
    ];
    let generate = "svc_ops_generate_blueprint";
    let mut keys = full.clone();
    for part in parts {
        keys[part] = json!({});
    }
    let generated = ops.ok(generate, blueprint_arguments(generate, keys)).await;
    assert!(generated["blueprintId"].is_string(), "16 keys: {generated}");
    for part in parts {
        let contract = json!({ "propsSpec": full["propsSpec"], part: full[part] });
        let arguments = blueprint_arguments(generate, contract);
        if part == "actionSpec" {
            // Past the caps' check, the built-in card of 64 actions is more than a component may
            // weigh: generation's refusal, not the arguments'.
            let error = ops.refused(generate, arguments, "generation_failed").await;
            let message = error["message"].as_str().unwrap();
            assert!(message.contains("over the `component_bytes` budget"), "{message}");
        } else {
            let generated = ops.ok(generate, arguments).await;
            assert!(generated["blueprintId"].is_string(), "{part}: {generated}");
        }
    }

    // One past each cap: -32602 naming the field, with the refused value quoted.
    let at = contract_at_the_caps;
    let mut keys = at();
    keys["x-extra10"] = json!(10);
    let mut entry = at();
    entry["actionSpec"]["act0"]["k16"] = json!({});
    let mut client = at();
    client["clientCapabilities"]["extra15"] = json!(true);
    let mut agent = at();
    agent["agentCapabilities"]["extra15"] = json!(true);
    let mut gadgets = at();
    gadgets["clientCapabilities"]["gadgets"]["acme-chart"] = json!("1.0.0");
    let version = json!({ "clientCapabilities": { "gadgets": { "acme-chart": "v".repeat(129) } } });
    let mut tools = at();
    tools["agentCapabilities"]["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!("one_more"));
    let name = json!({ "agentCapabilities": { "tools": ["t".repeat(129)] } });
    let mut cases = vec![
        (keys, "contract", "has more than 16 properties"),
        (entry, "contract.actionSpec.act0", "has more than 16 properties"),
        (client, "contract.clientCapabilities", "has more than 16 properties"),
        (agent, "contract.agentCapabilities", "has more than 16 properties"),
        (
            gadgets,
            "contract.clientCapabilities.gadgets",
            "has more than 64 properties",
        ),
        (
            version,
            "contract.clientCapabilities.gadgets.acme-chart",
            "is longer than 128 characters",
        ),
        (tools, "contract.agentCapabilities.tools", "has more than 64 items"),
        (
            name,
            "contract.agentCapabilities.tools.0",
            "is longer than 128 characters",
        ),
    ];
    for (section, prefix) in [("actionSpec", "act"), ("streamSpec", "chan"), ("contextSpec", "slot")] {
        let mut over = at();
        over[section][format!("{prefix}64")] = json!({ "schema": {} });
        let field = match section {
            "actionSpec" => "contract.actionSpec",
            "streamSpec" => "contract.streamSpec",
            _ => "contract.contextSpec",
        };
        cases.push((over, field, "has more than 64 properties"));
    }
    for tool in BLUEPRINT_TOOLS {
        for (contract, field, rule) in &cases {
            let refused = field
                .split('.')
                .skip(1)
                .fold(contract, |value, key| match key.parse::<usize>() {
                    Ok(index) if value.is_array() => &value[index],
                    _ => &value[key],
                });
            let message = ops
                .invalid(tool, blueprint_arguments(tool, contract.clone()), field)
                .await;
            assert_eq!(
                message,
                format!("Invalid params: {field}: {} {rule}", quoted_json(refused)),
                "{tool}"
            );
        }
    }
    // Nothing refused was stored: those at the caps are the app's only blueprints.
    let listed = ops.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(listed["blueprints"].as_array().unwrap().len(), 6, "{listed}");
}
