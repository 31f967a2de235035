//! `svc_handshake`: a draft agreed, amended or declined; the blueprint cache it consults (reuse,
//! update, forceCreate); and a handshake's single use by `svc_render`.

use serde_json::json;
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::agent_tools::support::{handshake, order_contract};

on_every_backend!(Auth::DevAllowAll =>
    a_clean_draft_is_agreed_with_agent_origin,
    a_repairable_draft_is_amended_with_synth_origin,
    an_unrepairable_draft_is_declined,
    a_property_named_like_an_annotation_keeps_its_contract_apart,
    force_create_with_a_repairable_draft_is_synth,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    same_intent_and_contract_reuse_the_cached_blueprint,
    force_create_replaces_a_cached_blueprint,
    a_handshake_is_single_use,
);

async fn a_clean_draft_is_agreed_with_agent_origin(app: TestApp) {
    let hs = handshake(&app, "order approval", order_contract()).await;
    assert_eq!(hs["action"], "create");
    assert_eq!(hs["suggestion"]["origin"], "agent");
    assert!(hs["suggestion"]["blueprintMeta"]["blueprintId"].is_string());
    assert!(hs.get("propsSchema").is_none(), "agreed verbatim: no propsSchema");
    let hash = hs["propsSchemaHash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(hash.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
    assert_eq!(hs["propsSchemaProfile"], "full");
    assert_eq!(hs["nextStep"]["tool"], "svc_render");
}

async fn a_repairable_draft_is_amended_with_synth_origin(app: TestApp) {
    let draft = json!({ "propsSpec": { "properties": { "n": { "type": "integer" } }, "required": ["n"], "additionalProperties": false }, "extra": true });
    let hs = handshake(&app, "counter", draft).await;
    assert_eq!(hs["suggestion"]["origin"], "synth");
    let codes: Vec<&str> = hs["suggestion"]["amendments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"unknown_key") && codes.contains(&"props_type_added"),
        "{codes:?}"
    );
    assert_eq!(hs["propsSchema"]["type"], "object");
    assert_eq!(hs["propsSchemaProfile"], "grammar-safe");
    // The enforced schema is the amended one: a string `n` violates it.
    let err = app
        .tool_error_result(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "n": "x" } }),
        )
        .await;
    assert_eq!(err["error"]["code"], "contract_violation");
}

async fn an_unrepairable_draft_is_declined(app: TestApp) {
    let hs = handshake(&app, "bad", json!({ "propsSpec": { "type": "array" } })).await;
    assert_eq!(hs["action"], "declined");
    assert!(hs.get("handshakeId").is_none());
    assert_eq!(hs["findings"][0]["code"], "props_not_object");
    assert_eq!(hs["findings"][0]["path"], "/propsSpec/type");
}

async fn same_intent_and_contract_reuse_the_cached_blueprint(app: TestApp) {
    let first = app
        .render("order approval", order_contract(), json!({ "title": "A" }))
        .await;
    assert_eq!(first["cache"]["hit"], false);
    let hs = handshake(&app, "order approval", order_contract()).await;
    assert_eq!(hs["action"], "reuse");
    assert_eq!(hs["suggestion"]["origin"], "cache");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], first["blueprintId"]);
    let second = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "B" } }),
        )
        .await;
    assert_eq!(second["blueprintId"], first["blueprintId"]);
    assert_eq!(second["cache"]["hit"], true);
    assert_eq!(second["cache"]["cachedBlueprintId"], first["blueprintId"]);
    assert_eq!(second["cache"]["llmCallsAvoided"], 1);
    assert_eq!(second["contractHash"], first["contractHash"]);
    assert_ne!(second["sessionId"], first["sessionId"]);
    // Another intent with the same contract is a different component.
    let other = handshake(&app, "order review", order_contract()).await;
    assert_eq!(other["action"], "create");
    // The same intent with another contract is an update.
    let changed = handshake(&app, "order approval", json!({ "propsSpec": { "type": "object" } })).await;
    assert_eq!(changed["action"], "update");
}

/// `title` is an annotation keyword of a schema, but a property called `title` is props shape: a
/// component cached for a string title is not served for a numeric one.
async fn a_property_named_like_an_annotation_keeps_its_contract_apart(app: TestApp) {
    let titled = |ty: &str| json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": ty } }, "required": ["title"] } });
    let first = app.render("task card", titled("string"), json!({ "title": "A" })).await;
    let hs = handshake(&app, "task card", titled("number")).await;
    assert_eq!(hs["action"], "update", "{hs}");
    assert_eq!(hs["suggestion"]["origin"], "agent");
    assert_ne!(hs["suggestion"]["blueprintMeta"]["blueprintId"], first["blueprintId"]);
    let second = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": 7 } }),
        )
        .await;
    assert_ne!(second["contractHash"], first["contractHash"]);
    assert_eq!(second["cache"]["hit"], false);
    // A reworded description of the same shape is still the cached component.
    let reworded = json!({ "propsSpec": { "type": "object", "description": "a task", "properties": { "title": { "type": "string", "description": "its name" } }, "required": ["title"] } });
    let again = handshake(&app, "task card", reworded).await;
    assert_eq!(again["action"], "reuse");
    assert_eq!(
        again["suggestion"]["blueprintMeta"]["blueprintId"],
        first["blueprintId"]
    );
}

async fn force_create_replaces_a_cached_blueprint(app: TestApp) {
    let first = app.render("chart", json!({}), json!({})).await;
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "chart", "blueprintDraft": { "contract": {} }, "forceCreate": true }),
        )
        .await;
    assert_eq!(hs["action"], "replace");
    assert_eq!(hs["suggestion"]["origin"], "agent");
    let second = app
        .tool_ok("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    assert_eq!(second["cache"]["hit"], false);
    assert_ne!(second["blueprintId"], first["blueprintId"]);
}

/// forceCreate skips the search, not validation: an amended draft is `synth` with its amendments
/// (docs/agent-api.md says why this is not `agent`), and the render enforces the amended contract.
async fn force_create_with_a_repairable_draft_is_synth(app: TestApp) {
    let draft =
        json!({ "propsSpec": { "properties": { "n": { "type": "integer" } }, "required": ["n"] }, "extra": true });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "counter", "blueprintDraft": { "contract": draft }, "forceCreate": true }),
        )
        .await;
    assert_eq!(hs["action"], "create");
    assert_eq!(hs["suggestion"]["origin"], "synth");
    assert!(hs["suggestion"].get("cache").is_none());
    let codes: Vec<&str> = hs["suggestion"]["amendments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["code"].as_str().unwrap())
        .collect();
    // Amendments follow the draft's declared key order (`propsSpec` before `extra`).
    assert_eq!(codes, ["props_type_added", "unknown_key"]);
    assert_eq!(hs["propsSchema"]["type"], "object");
    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "n": 1 } }),
        )
        .await;
    assert_eq!(rendered["outcome"], "rendered");
    assert_eq!(rendered["cache"]["hit"], false);
    assert_eq!(
        rendered["blueprintId"],
        hs["suggestion"]["blueprintMeta"]["blueprintId"]
    );
}

async fn a_handshake_is_single_use(app: TestApp) {
    let hs = handshake(&app, "once", json!({})).await;
    app.tool_ok("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    let err = app
        .tool_rpc_error("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("handshakeId"), "{err}");
    let unknown = app
        .tool_rpc_error("svc_render", json!({ "handshakeId": "nope", "props": {} }))
        .await;
    assert_eq!(unknown["code"], -32602);
    // A model route that does not parse fails input parsing, before the handshake is looked up.
    let both = app
        .tool_rpc_error(
            "svc_render",
            json!({ "handshakeId": "nope", "props": {}, "infra": { "model": "gpt-4o" } }),
        )
        .await;
    assert!(both["message"].as_str().unwrap().contains("infra.model"), "{both}");
}
