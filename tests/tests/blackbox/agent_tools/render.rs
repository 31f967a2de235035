//! `svc_render`: the rendered result with its identity and `_meta` slice, the props and input it
//! refuses, and `resources/read` of what it mounted.

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::agent_tools::support::{handshake, order_contract, rendered};

on_every_backend!(Auth::DevAllowAll =>
    a_rendered_result_carries_identity_and_the_meta_slice,
    props_that_break_the_contract_are_a_contract_violation_and_keep_the_handshake,
    render_input_rules,
    resources_read_mounts_a_render_and_pinned_epochs,
);

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
