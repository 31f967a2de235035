//! Every agent tool and its error paths, over real HTTP, on every backend.

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    a_clean_draft_is_agreed_with_agent_origin,
    a_repairable_draft_is_amended_with_synth_origin,
    an_unrepairable_draft_is_declined,
    a_property_named_like_an_annotation_keeps_its_contract_apart,
    force_create_with_a_repairable_draft_is_synth,
    a_rendered_result_carries_identity_and_the_meta_slice,
    props_that_break_the_contract_are_a_contract_violation_and_keep_the_handshake,
    render_input_rules,
    merge_updates_apply_rfc7396,
    amend_repaints_in_place,
    emit_validates_channel_payload_and_completion,
    get_session_projects_times_as_epoch_ms_and_bumps_activity,
    render_source_returns_the_tsx,
    catalogs_list_gadgets_and_themes,
    resources_read_mounts_a_render_and_pinned_epochs,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    same_intent_and_contract_reuse_the_cached_blueprint,
    force_create_replaces_a_cached_blueprint,
    a_handshake_is_single_use,
    update_moves_the_epoch_and_freezes_history,
    consume_rules,
    sessions_are_tenant_scoped,
    list_sessions_filters_by_host_session_and_limits,
);

fn order_contract() -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": {
                "title": { "type": "string" },
                "items": { "type": "array", "items": { "type": "object", "properties": { "sku": { "type": "string" }, "qty": { "type": "integer" } } } }
            },
            "required": ["title"]
        },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } },
        "streamSpec": {
            "log": { "mode": "append", "schema": { "type": "string" }, "complete": true },
            "status": { "mode": "replace", "schema": { "type": "object", "properties": { "pct": { "type": "number" } }, "required": ["pct"] } }
        },
        "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "summary" } }
    })
}

async fn handshake(app: &TestApp, intent: &str, contract: Value) -> Value {
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
    )
    .await
}

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

async fn a_rendered_result_carries_identity_and_the_meta_slice(app: TestApp) {
    let hs = handshake(&app, "order approval", order_contract()).await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Order 42" } }),
        )
        .await;
    let result = &body["result"];
    let r = &result["structuredContent"];
    assert_eq!(r["outcome"], "rendered");
    let session = r["sessionId"].as_str().unwrap();
    assert_eq!(r["resourceUri"], format!("ui://svc/render/{session}"));
    assert_eq!(r["action"], "create");
    assert_eq!(r["blueprintId"], hs["suggestion"]["blueprintMeta"]["blueprintId"]);
    assert_eq!(r["contractHash"], hs["suggestion"]["blueprintMeta"]["contractHash"]);
    assert_eq!(r["variantKey"], hs["suggestion"]["blueprintMeta"]["variantKey"]);
    assert_eq!(r["nextStep"]["tool"], "svc_consume");
    assert_eq!(r["nextStep"]["example"]["sessionId"], session);
    assert!(r.get("error").is_none() && r.get("refusal").is_none());
    assert!(result["content"][0]["text"].as_str().unwrap().contains(session));
    let meta = &result["_meta"];
    assert_eq!(meta["ui"]["resourceUri"], r["resourceUri"]);
    let slice = &meta["ai.svc/render"];
    assert_eq!(slice["sessionId"], session);
    assert!(slice["appId"].as_str().is_some_and(|a| !a.is_empty()));
    assert_eq!(slice["wsUrl"], format!("{}/ws", app.base.replace("http://", "ws://")));
    assert!(slice["wsToken"].as_str().is_some_and(|t| t.len() > 20));
    assert!(slice["expiresAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(slice["themeId"], "default");
    assert!(slice["theme"]["--svc-color-bg"].is_string());
    assert_eq!(slice["lastSequence"], 0);
    // What the card paints with, so a shell in a host that allows no connection still draws
    // it: the same component and contract the per-render document embeds, and the props.
    assert_eq!(slice["props"], json!({ "title": "Order 42" }));
    assert_eq!(slice["component"]["blueprintId"], r["blueprintId"]);
    let read = app.rpc("resources/read", json!({ "uri": r["resourceUri"] })).await.1;
    let html = read["result"]["contents"][0]["text"].as_str().unwrap();
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let embedded: Value = serde_json::from_str(&html[start..start + html[start..].find("</script>").unwrap()]).unwrap();
    assert!(
        slice["component"]["code"]
            .as_str()
            .is_some_and(|code| code.contains("export default"))
    );
    assert_eq!(slice["component"]["code"], embedded["component"]["code"]);
    assert_eq!(slice["contract"], embedded["contract"]);
    // Both palettes, as the card document (built apart) carries them.
    assert_eq!(slice["theme"], embedded["theme"]);
    assert_eq!(slice["themeVariants"], embedded["themeVariants"]);
    assert_eq!(slice["themeMode"], embedded["themeMode"]);
    assert!(
        slice["themeVariants"]["dark"]["--svc-color-bg"].is_string(),
        "{}",
        slice["themeVariants"]
    );
    // A theme with one mode paints the same from either path.
    let hs = handshake(&app, "order approval", order_contract()).await;
    let paper = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Order 43" }, "themeId": "paper" }),
        )
        .await;
    let slice = &paper["result"]["_meta"]["ai.svc/render"];
    let uri = &paper["result"]["structuredContent"]["resourceUri"];
    let read = app.rpc("resources/read", json!({ "uri": uri })).await.1;
    let html = read["result"]["contents"][0]["text"].as_str().unwrap();
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let embedded: Value = serde_json::from_str(&html[start..start + html[start..].find("</script>").unwrap()]).unwrap();
    assert_eq!(slice["themeId"], "paper");
    assert!(
        slice["theme"]["--svc-font-family"]
            .as_str()
            .unwrap()
            .contains("Georgia")
    );
    assert!(slice["themeVariants"]["dark"].is_null(), "{}", slice["themeVariants"]);
    for field in ["theme", "themeMode", "themeVariants"] {
        assert_eq!(slice[field], embedded[field], "{field}");
    }
    assert!(
        slice["contract"]["actionSpec"]["approve"].is_object(),
        "{}",
        slice["contract"]
    );
    // No actions: no nextStep.
    let plain = app.render("plain", json!({}), json!({})).await;
    assert!(plain.get("nextStep").is_none());
}

async fn props_that_break_the_contract_are_a_contract_violation_and_keep_the_handshake(app: TestApp) {
    let hs = handshake(&app, "order approval", order_contract()).await;
    let err = app
        .tool_error_result(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": 5 } }),
        )
        .await;
    assert_eq!(err["error"]["code"], "contract_violation");
    assert_eq!(err["error"]["violations"][0]["path"], "/title");
    let ok = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "fixed" } }),
        )
        .await;
    assert_eq!(ok["outcome"], "rendered");
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

async fn render_input_rules(app: TestApp) {
    let cases = [
        (json!({ "infra": { "model": "gpt-4o" } }), "infra.model"),
        (json!({ "infra": { "model": "acme:unknown-model" } }), "infra.model"),
        (
            json!({ "infra": { "model": "openai:gpt-4o", "temperature": 1 } }),
            "infra",
        ),
        (json!({ "themeId": "neon" }), "themeId"),
        (json!({ "ttlSeconds": 5 }), "ttlSeconds"),
        (
            json!({ "override": { "contract": { "propsSpec": { "properties": {} } } } }),
            "override.contract",
        ),
    ];
    for (extra, field) in cases {
        let hs = handshake(&app, "rules", json!({})).await;
        let mut args = json!({ "handshakeId": hs["handshakeId"], "props": {} });
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let err = app.tool_rpc_error("svc_render", args).await;
        assert_eq!(err["code"], -32602, "{extra}");
        assert!(err["message"].as_str().unwrap().contains(field), "{extra}: {err}");
        // A parse failure consumed nothing: the handshake still renders.
        let ok = app
            .tool_ok("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
            .await;
        assert_eq!(ok["outcome"], "rendered");
    }
    let hs = handshake(&app, "rules", json!({})).await;
    let ok = app
        .tool_ok("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {}, "infra": { "model": "openai/gpt-4o" }, "themeId": "high-contrast", "ttlSeconds": 120 }))
        .await;
    assert_eq!(ok["outcome"], "rendered");
}

async fn rendered(app: &TestApp, props: Value) -> String {
    let r = app.render("order approval", order_contract(), props).await;
    r["sessionId"].as_str().unwrap().to_owned()
}

async fn update_moves_the_epoch_and_freezes_history(app: TestApp) {
    let session = rendered(&app, json!({ "title": "v1" })).await;
    let up = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(up["updated"], true);
    assert_eq!(up["epoch"], 2);
    assert_eq!(up["resourceUri"], format!("ui://svc/render/{session}#2"));
    assert!(up["propsSchemaHash"].is_string());
    let same = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(same["updated"], false);
    assert_eq!(same["epoch"], 2);
    assert!(same["warning"].is_string());
    let bad = app
        .tool_error_result(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 1 } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
    let missing = app
        .tool_rpc_error("svc_update", json!({ "sessionId": session, "kind": "replace" }))
        .await;
    assert!(missing["message"].as_str().unwrap().contains("props"));
    // Document 1: `patch` is required with `kind: merge`; `kind` is `replace` or `merge`.
    for (arguments, field) in [
        (json!({ "sessionId": session, "kind": "merge" }), "patch"),
        (
            json!({ "sessionId": session, "kind": "patch", "props": { "title": "v3" } }),
            "kind",
        ),
    ] {
        let refused = app.tool_rpc_error("svc_update", arguments.clone()).await;
        assert_eq!(refused["code"], -32602, "{arguments}: {refused}");
        assert!(
            refused["message"].as_str().unwrap().contains(field),
            "{arguments}: the message names `{field}`: {refused}"
        );
    }
    // An integer written as a float (`5.0`, as some clients serialise every number) is the
    // integer the published schema lets through.
    let floated = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 0.0 }))
        .await;
    assert_eq!(floated["status"], "active", "{floated}");
    let frozen = app
        .rpc(
            "resources/read",
            json!({ "uri": format!("ui://svc/render/{session}#1") }),
        )
        .await
        .1;
    assert!(
        frozen["result"]["contents"][0]["text"].as_str().unwrap().contains("v1"),
        "{frozen}"
    );
}

async fn merge_updates_apply_rfc7396(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t", "items": [{ "sku": "a", "qty": 1 }] })).await;
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "merge", "patch": { "items": null, "title": "u" } }),
    )
    .await;
    let src = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": session }))
        .await;
    assert_eq!(src["blueprint"]["fixtureProps"], json!({ "title": "u" }));
    let bad = app
        .tool_error_result(
            "svc_update",
            json!({ "sessionId": session, "kind": "merge", "patch": { "title": null } }),
        )
        .await;
    assert_eq!(
        bad["error"]["code"], "contract_violation",
        "post-merge props lose the required title"
    );
}

async fn amend_repaints_in_place(app: TestApp) {
    let session = rendered(&app, json!({ "title": "v1" })).await;
    let a = app
        .tool_ok(
            "svc_amend",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v1b" } }),
        )
        .await;
    assert_eq!(a["updated"], true);
    assert_eq!(a["resourceUri"], format!("ui://svc/render/{session}"));
    assert!(a.get("epoch").is_none());
    let up = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(up["epoch"], 2, "amend did not move the epoch");
}

async fn emit_validates_channel_payload_and_completion(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let ok = app
        .tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": "line 1" }),
        )
        .await;
    assert_eq!(ok, json!({ "accepted": true }));
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "done", "complete": true }),
    )
    .await;
    let undeclared = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": session, "channel": "nope", "payload": 1 }),
        )
        .await;
    assert!(undeclared["message"].as_str().unwrap().contains("channel"));
    let not_completable = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": session, "channel": "status", "payload": { "pct": 1 }, "complete": true }),
        )
        .await;
    assert!(not_completable["message"].as_str().unwrap().contains("complete"));
    let bad = app
        .tool_error_result(
            "svc_emit",
            json!({ "sessionId": session, "channel": "status", "payload": { "pct": "x" } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
}

async fn consume_rules(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let now = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(now, json!({ "events": [], "status": "active" }));
    let started = std::time::Instant::now();
    let waited = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 1 }))
        .await;
    assert_eq!(waited["events"], json!([]));
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(900),
        "long-poll returned early"
    );
    for bad in [json!(26), json!(-1), json!(1.5), json!("5")] {
        let err = app
            .tool_rpc_error("svc_consume", json!({ "sessionId": session, "timeout": bad }))
            .await;
        assert_eq!(err["code"], -32602, "{bad}");
    }
    let unknown = app
        .tool_rpc_error(
            "svc_consume",
            json!({ "sessionId": "00000000-0000-0000-0000-000000000000" }),
        )
        .await;
    assert_eq!(unknown["code"], -32002);
}

async fn sessions_are_tenant_scoped(app: TestApp) {
    // Under --dev-allow-all every bearer is `builder`; a strict server with two keys is another
    // test. Here: an unknown id and a random id answer identically.
    let a = app
        .tool_rpc_error("svc_get_session", json!({ "sessionId": "nope" }))
        .await;
    let b = app
        .tool_rpc_error(
            "svc_get_session",
            json!({ "sessionId": uuid::Uuid::new_v4().to_string() }),
        )
        .await;
    assert_eq!(a, b);
    assert_eq!(a["code"], -32002);
    for tool in ["svc_update", "svc_amend"] {
        let e = app
            .tool_rpc_error(tool, json!({ "sessionId": "nope", "kind": "replace", "props": {} }))
            .await;
        assert_eq!(e, a, "{tool}");
    }
    let e = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": "nope", "channel": "log", "payload": 1 }),
        )
        .await;
    assert_eq!(e, a);
    let e = app
        .tool_rpc_error("svc_get_render_source", json!({ "sessionId": "nope" }))
        .await;
    assert_eq!(e, a);
}

async fn get_session_projects_times_as_epoch_ms_and_bumps_activity(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let first = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(first["variant"], "render");
    assert_eq!(first["id"], session);
    assert_eq!(first["eventSequence"], 0);
    for field in ["createdAt", "lastActivityAt", "expiresAt"] {
        assert!(first[field].is_i64(), "{field} is epoch ms: {first}");
    }
    assert_eq!(first["contextSnapshot"], json!({ "tab": "summary" }));
    assert!(first.get("componentCode").is_none() && first.get("sourceCode").is_none());
    // The heartbeat's resolution is a second: past it a read records its own time...
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let bumped = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let at = |view: &Value, field: &str| view[field].as_i64().unwrap();
    assert!(
        at(&bumped, "lastActivityAt") >= at(&first, "lastActivityAt") + 1_100,
        "heartbeat bumped: {first} then {bumped}"
    );
    let ttl = at(&first, "expiresAt") - at(&first, "lastActivityAt");
    assert_eq!(
        at(&bumped, "expiresAt") - at(&bumped, "lastActivityAt"),
        ttl,
        "the TTL slides"
    );
    // ...and a read within it reports the recorded times, not a newer one it did not store. On a
    // slow machine the second read may itself land past the resolution: then it is a bump of its
    // own, a second or more later, and never a time in between.
    let again = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let moved = at(&again, "lastActivityAt") - at(&bumped, "lastActivityAt");
    assert!(moved == 0 || moved >= 1_000, "{bumped} then {again}");
    assert_eq!(at(&again, "expiresAt") - at(&again, "lastActivityAt"), ttl);
}

async fn render_source_returns_the_tsx(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let before = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    let src = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": session }))
        .await;
    let source = src["blueprint"]["source"].as_str().unwrap();
    assert!(source.contains("export default"), "{source}");
    assert!(source.contains("useAction"), "the approve action is wired");
    assert_eq!(
        src["blueprint"]["contract"]["actionSpec"],
        order_contract()["actionSpec"]
    );
    assert_eq!(src["blueprint"]["fixtureProps"], json!({ "title": "t" }));
    let after = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert!(after["lastActivityAt"].as_i64() >= before["lastActivityAt"].as_i64());
}

async fn list_sessions_filters_by_host_session_and_limits(app: TestApp) {
    let mut ids = vec![];
    for i in 0..3 {
        let hs = handshake(&app, "listed", json!({})).await;
        let meta =
            json!({ "ai.svc/host-session": { "hostName": "claude", "hostSessionId": format!("conv-{}", i % 2) } });
        let body = app.rpc("tools/call", json!({ "name": "svc_render", "arguments": { "handshakeId": hs["handshakeId"], "props": {} }, "_meta": meta })).await.1;
        ids.push(
            body["result"]["structuredContent"]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    app.render("unhosted", json!({}), json!({})).await;
    let all = app.tool_ok("svc_list_sessions", json!({})).await;
    assert_eq!(all["sessions"].as_array().unwrap().len(), 4);
    let conv0 = app
        .tool_ok(
            "svc_list_sessions",
            json!({ "hostName": "claude", "hostSessionId": "conv-0" }),
        )
        .await;
    let got: Vec<&str> = conv0["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(got, vec![ids[0].as_str(), ids[2].as_str()], "newest last");
    let row = &conv0["sessions"][0];
    assert_eq!(row["hostName"], "claude");
    assert_eq!(row["status"], "active");
    assert!(
        row["createdAt"].as_str().unwrap().ends_with('Z'),
        "ISO 8601 strings here"
    );
    // An active row carries a wsToken that subscribes to its session (a host re-mounting it).
    let token = row["wsToken"].as_str().expect("an active row carries a wsToken");
    assert!(row["wsTokenExpiresAt"].as_str().unwrap().ends_with('Z'));
    let mut ws = svc_tests::live::LiveClient::connect(&app.base).await;
    ws.send("subscribe", json!({ "sessionId": row["sessionId"], "wsToken": token }))
        .await;
    ws.expect("ack").await;
    let limited = app.tool_ok("svc_list_sessions", json!({ "limit": 1 })).await;
    assert_eq!(limited["sessions"].as_array().unwrap().len(), 1);
    for bad in [0, 201] {
        let err = app.tool_rpc_error("svc_list_sessions", json!({ "limit": bad })).await;
        assert_eq!(err["code"], -32602);
    }
}

async fn catalogs_list_gadgets_and_themes(app: TestApp) {
    let gadgets = app.tool_ok("svc_list_gadgets", json!({})).await;
    let standard = &gadgets["gadgets"][0];
    assert_eq!(standard["package"], "@svc/gadgets");
    let exports = standard["exports"].as_array().unwrap();
    let hooks: Vec<&str> = exports.iter().filter_map(|e| e["hook"].as_str()).collect();
    assert_eq!(hooks.len(), 7);
    let components: Vec<&str> = exports.iter().filter_map(|e| e["component"].as_str()).collect();
    assert_eq!(
        components,
        ["ActionButton", "Chart", "DataTable", "StatusBadge"],
        "the kit"
    );
    for e in standard["exports"].as_array().unwrap() {
        for field in ["description", "usage", "example"] {
            assert!(e[field].is_string(), "{field} on {e}");
        }
    }
    let themes = app.tool_ok("svc_list_themes", json!({})).await;
    let ids: Vec<&str> = themes["themes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"default") && ids.contains(&"high-contrast"), "{ids:?}");
    for tool in ["svc_list_gadgets", "svc_list_themes"] {
        let denied = app.tool_error_result(tool, json!({ "appId": "someone-else" })).await;
        assert_eq!(denied["error"]["code"], "app_access_denied");
    }
}

async fn resources_read_mounts_a_render_and_pinned_epochs(app: TestApp) {
    let shell = app.rpc("resources/read", json!({ "uri": "ui://svc/render" })).await.1;
    let content = &shell["result"]["contents"][0];
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    assert!(content["text"].as_str().unwrap().starts_with("<!doctype html>"));
    let session = rendered(&app, json!({ "title": "</script><b>x" })).await;
    let read = app
        .rpc("resources/read", json!({ "uri": format!("ui://svc/render/{session}") }))
        .await
        .1;
    let html = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(!html.contains("</script><b>"), "props are escaped inside the document");
    let missing = app
        .rpc("resources/read", json!({ "uri": "ui://svc/render/nope" }))
        .await
        .1;
    assert_eq!(missing["error"]["code"], -32002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_ttl_elapsed_is_expired() {
    let app = svc_tests::TestApp::spawn_configured("ttl", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.sessions.default_ttl_seconds = 1;
    })
    .await
    .unwrap();
    let session = rendered(&app, json!({ "title": "t" })).await;
    let live = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(live["status"], "active");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let expired = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 5 }))
        .await;
    assert_eq!(
        expired,
        json!({ "events": [], "status": "expired" }),
        "an expired session answers at once"
    );
    let err = app
        .tool_rpc_error(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "u" } }),
        )
        .await;
    assert_eq!(err["code"], -32002);
    // Existence never leaks through the props: ones that break the contract are not looked at
    // (nor are ones over the props budget: the unit tests of `svc_update`).
    for (tool, arguments) in [
        (
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 7 } }),
        ),
        (
            "svc_amend",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 7 } }),
        ),
        (
            "svc_update",
            json!({ "sessionId": session, "kind": "merge", "patch": { "title": 7 } }),
        ),
    ] {
        let err = app.tool_rpc_error(tool, arguments).await;
        assert_eq!(err["code"], -32002, "{tool}: {err}");
    }
    // Every other tool answers an expired session like a missing one, and a read never revives it.
    for (tool, arguments) in [
        ("svc_get_session", json!({ "sessionId": session })),
        ("svc_get_render_source", json!({ "sessionId": session })),
        (
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": "x" }),
        ),
        ("svc_runtime_refresh_ws_token", json!({ "sessionId": session })),
        (
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": {} }),
        ),
    ] {
        let err = app.tool_rpc_error(tool, arguments).await;
        assert_eq!(err["code"], -32002, "{tool}: {err}");
    }
    let listed = app.tool_ok("svc_list_sessions", json!({})).await;
    assert_eq!(listed["sessions"][0]["status"], "expired");
    assert!(
        listed["sessions"][0].get("wsToken").is_none(),
        "no token for a session that cannot be subscribed"
    );
}

/// The values of a closed set as `schema` publishes them (`enum`, or `const`), following `$ref`s
/// into `root` and the branches of `anyOf` / `oneOf` / `allOf`.
fn closed_values(root: &Value, schema: &Value) -> std::collections::BTreeSet<String> {
    let mut values = std::collections::BTreeSet::new();
    for node in branches(root, schema) {
        let listed = node["enum"].as_array().cloned().unwrap_or_default();
        for value in listed.iter().chain(node.get("const")) {
            if let Some(text) = value.as_str() {
                values.insert(text.to_owned());
            }
        }
    }
    values
}

/// `schema` and every schema it is made of: its `$ref` target and its combinators' branches.
fn branches<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    let mut found = vec![schema];
    if let Some(target) = schema["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        found.extend(branches(root, root.pointer(target).expect("a $ref into the schema")));
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for branch in schema[combinator].as_array().into_iter().flatten() {
            found.extend(branches(root, branch));
        }
    }
    found
}

/// The schemas of property `name` anywhere in `schema`'s branches.
fn property<'a>(root: &'a Value, schema: &'a Value, name: &str) -> Vec<&'a Value> {
    branches(root, schema)
        .into_iter()
        .filter_map(|node| node["properties"].get(name))
        .collect()
}

fn values_at(root: &Value, path: &[&str]) -> std::collections::BTreeSet<String> {
    let mut schemas = vec![root];
    for name in path {
        schemas = schemas.into_iter().flat_map(|s| property(root, s, name)).collect();
    }
    schemas.into_iter().flat_map(|s| closed_values(root, s)).collect()
}

fn set(values: &[&str]) -> std::collections::BTreeSet<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// Document 1's closed sets are published as such in `tools/list`, so a client can check them:
/// the render's outcomes, actions, failure codes and refusal fields, and the consume status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_schemas_enumerate_the_closed_sets() {
    let app = TestApp::spawn("closed_sets", svc_tests::Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let listed = app.rpc("tools/list", json!({})).await.1;
    let output_schema = |name: &str| {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"))["outputSchema"]
            .clone()
    };
    let render = output_schema("svc_render");
    assert_eq!(
        values_at(&render, &["outcome"]),
        set(&["rendered", "failed", "refused"])
    );
    assert_eq!(
        values_at(&render, &["action"]),
        set(&["create", "reuse", "update", "replace", "declined"])
    );
    assert_eq!(
        values_at(&render, &["error", "code"]),
        set(&[
            "PRODUCTION_FAILED",
            "VALIDATION_ERROR",
            "NO_PLATFORM_KEY",
            "NO_CREDENTIALS",
            "GENERATION_QUEUE_OVERLOADED"
        ])
    );
    let refusal_codes = values_at(&render, &["refusal", "code"]);
    let named = set(&[
        "insufficient_credit",
        "app_rate_limited",
        "issuer_rate_limited",
        "app_deprovisioned",
    ]);
    assert!(
        refusal_codes.is_subset(&named),
        "the render gate's codes are the registry's: {refusal_codes:?}"
    );
    for raised_by_a_render in ["insufficient_credit", "app_rate_limited", "issuer_rate_limited"] {
        assert!(refusal_codes.contains(raised_by_a_render), "{refusal_codes:?}");
    }
    assert_eq!(
        values_at(&render, &["refusal", "retry"]),
        set(&["after-fix", "next-period", "later", "never"])
    );
    assert_eq!(values_at(&render, &["refusal", "handshake"]), set(&["intact"]));
    let consume = output_schema("svc_consume");
    assert_eq!(values_at(&consume, &["status"]), set(&["active", "expired"]));
}

/// Document 1: the `wsToken` pair appears only where the deployment mints tokens. Without the live
/// channel (and so without the MCP-Apps option) no row carries one, as no render does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_sessions_mints_no_ws_token_without_the_live_channel() {
    // The live channel decides, not the MCP-Apps option: a card embedded without MCP-Apps
    // opens `/ws` with a listed token.
    for live in [false, true] {
        let app = TestApp::spawn_configured("no_live", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
            s.live.enabled = live;
            s.mcp_apps.enabled = false;
        })
        .await
        .unwrap();
        let session = rendered(&app, json!({ "title": "t" })).await;
        let listed = app.tool_ok("svc_list_sessions", json!({})).await;
        let row = &listed["sessions"][0];
        assert_eq!(row["sessionId"], session.as_str());
        assert_eq!(row["status"], "active");
        for field in ["wsToken", "wsTokenExpiresAt"] {
            assert_eq!(row.get(field).is_some(), live, "live {live}, {field}: {row}");
        }
    }
}

/// Document 1: when the TTL elapses, `svc_consume` returns `expired`; a long-poll waiting then
/// ends with it rather than at its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_ends_when_its_session_expires() {
    let app = TestApp::spawn_configured("ttl_poll", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.sessions.default_ttl_seconds = 2;
    })
    .await
    .unwrap();
    let session = rendered(&app, json!({ "title": "t" })).await;
    let started = std::time::Instant::now();
    let polled = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 20 }))
        .await;
    assert_eq!(polled, json!({ "events": [], "status": "expired" }));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the poll ended at the expiry: {:?}",
        started.elapsed()
    );
}
