//! The counts an agent's draft may reach (docs/agent-api.md, "Bounds of a draft"): the published
//! `inputSchema`s of `svc_handshake` and `svc_render` state them, a draft at every cap is
//! negotiated, one past a cap is -32602 naming the field, and an `override.variance` may not grow
//! the merged variance past 32 fields. On SQLite and PostgreSQL.

use serde_json::{Map, Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    the_published_schemas_state_the_caps,
    a_draft_at_the_caps_is_negotiated_and_one_past_is_refused,
    an_override_may_not_grow_the_variance_past_32_fields,
);

fn named(count: usize, name: impl Fn(usize) -> String, value: impl Fn(usize) -> Value) -> Map<String, Value> {
    (0..count).map(|i| (name(i), value(i))).collect()
}

/// 64 actions, 64 channels, 64 slots, 64 gadget packages and 64 tools, with long names.
fn contract_at_the_caps() -> Value {
    let section =
        |prefix: &'static str, entry: Value| named(64, move |i| format!("{prefix}{i}"), move |_| entry.clone());
    let schema = json!({ "schema": { "type": "string" } });
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "actionSpec": section("act", schema.clone()),
        "streamSpec": section("chan", json!({ "mode": "append", "schema": { "type": "string" } })),
        "contextSpec": section("slot", schema),
        "clientCapabilities": {
            "gadgets": named(64, |i| format!("@acme/{}{i:02}", "p".repeat(206)), |_| json!("v".repeat(128))),
        },
        "agentCapabilities": {
            "tools": (0..64).map(|i| format!("{}{i:02}", "t".repeat(126))).collect::<Vec<_>>(),
        },
    })
}

/// A refused value as the message quotes it: its JSON, cut to 100 characters and marked `…`.
fn quoted(value: &str) -> String {
    let json = json!(value).to_string();
    json.chars().take(100).collect::<String>() + if json.chars().count() > 100 { "…" } else { "" }
}

fn variance_at_the_cap() -> Map<String, Value> {
    named(32, |i| format!("{}{i:02}", "n".repeat(62)), |_| json!("é".repeat(200)))
}

fn handshake(contract: Value, variance: Map<String, Value>) -> Value {
    json!({ "intent": "order card", "blueprintDraft": { "contract": contract, "variance": variance } })
}

async fn the_published_schemas_state_the_caps(app: TestApp) {
    let (_, body) = app.rpc("tools/list", json!({})).await;
    let tools = body["result"]["tools"].as_array().unwrap();
    let input = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    let handshake = input("svc_handshake");
    let draft = &handshake["$defs"]["BlueprintDraft"]["properties"];
    let contract = &draft["contract"];
    assert_eq!(contract["maxProperties"], 16, "{contract}");
    for section in ["actionSpec", "streamSpec", "contextSpec"] {
        assert_eq!(contract["properties"][section]["maxProperties"], 64);
        assert_eq!(
            contract["properties"][section]["additionalProperties"]["maxProperties"],
            16
        );
    }
    let gadgets = &contract["properties"]["clientCapabilities"]["properties"]["gadgets"];
    assert_eq!(
        (
            &gadgets["maxProperties"],
            &gadgets["propertyNames"]["maxLength"],
            &gadgets["additionalProperties"]["maxLength"]
        ),
        (&json!(64), &json!(214), &json!(128))
    );
    let tools_cap = &contract["properties"]["agentCapabilities"]["properties"]["tools"];
    assert_eq!(
        (&tools_cap["maxItems"], &tools_cap["items"]["maxLength"]),
        (&json!(64), &json!(128))
    );
    let variance = &draft["variance"];
    assert_eq!(
        (
            &variance["maxProperties"],
            &variance["propertyNames"]["maxLength"],
            &variance["additionalProperties"]["maxLength"]
        ),
        (&json!(32), &json!(64), &json!(200))
    );
    assert_eq!(draft["generator"]["maxLength"], 64);
    let render = input("svc_render");
    let over = &render["properties"]["override"]["properties"];
    for cap in ["maxProperties", "properties"] {
        assert_eq!(over["contract"][cap], contract[cap], "{cap}");
    }
    assert_eq!(over["variance"]["maxProperties"], 32);
    assert_eq!(
        over["variance"]["additionalProperties"]["type"],
        json!(["string", "number", "boolean", "null"])
    );
}

async fn a_draft_at_the_caps_is_negotiated_and_one_past_is_refused(app: TestApp) {
    let agreed = app
        .tool_ok(
            "svc_handshake",
            handshake(contract_at_the_caps(), variance_at_the_cap()),
        )
        .await;
    assert_eq!(agreed["suggestion"]["origin"], "agent", "{agreed}");

    let mut actions = contract_at_the_caps();
    actions["actionSpec"]["act64"] = json!({ "schema": {} });
    let mut tools = contract_at_the_caps();
    tools["agentCapabilities"]["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!("one_more"));
    let mut fields = variance_at_the_cap();
    fields.insert("one more".into(), json!("x"));
    for (arguments, field, rule) in [
        (
            handshake(actions, variance_at_the_cap()),
            "blueprintDraft.contract.actionSpec",
            "has more than 64 properties",
        ),
        (
            handshake(tools, variance_at_the_cap()),
            "blueprintDraft.contract.agentCapabilities.tools",
            "has more than 64 items",
        ),
        (
            handshake(json!({}), fields),
            "blueprintDraft.variance",
            "has more than 32 properties",
        ),
    ] {
        let error = app.tool_rpc_error("svc_handshake", arguments).await;
        assert_eq!(error["code"], -32602, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("Invalid params: {field}: ")) && message.ends_with(rule),
            "{message}"
        );
    }
    // The refused value is quoted as an excerpt: the whole message is known.
    let gadget = json!({ "clientCapabilities": { "gadgets": { "acme-chart": "v".repeat(129) } } });
    let error = app.tool_rpc_error("svc_handshake", handshake(gadget, Map::new())).await;
    assert_eq!(
        error,
        json!({
            "code": -32602,
            "message": format!(
                "Invalid params: blueprintDraft.contract.clientCapabilities.gadgets.acme-chart: {} is longer than 128 characters",
                quoted(&"v".repeat(129))
            ),
        })
    );
}

async fn an_override_may_not_grow_the_variance_past_32_fields(app: TestApp) {
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } });
    let fields = named(32, |i| format!("axis{i}"), |_| json!("x"));
    let hs = app.tool_ok("svc_handshake", handshake(contract, fields)).await;
    let render = |variance: Value| json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" }, "override": { "variance": variance } });
    let error = app
        .tool_rpc_error("svc_render", render(json!({ "axis0": "y", "one more": 1 })))
        .await;
    assert_eq!(
        error,
        json!({
            "code": -32602,
            "message": "Invalid params: override.variance: the merged variance would hold 33 fields, the most it may hold is 32: remove some with null",
        })
    );
    // Refused before anything ran: the same handshake renders once a field is removed.
    let rendered = app
        .tool_ok("svc_render", render(json!({ "axis0": null, "one more": 1 })))
        .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
}
