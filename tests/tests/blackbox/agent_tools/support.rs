//! The order contract the scenarios render, and the handshake and render steps they share.

use serde_json::{Value, json};
use svc_tests::TestApp;

pub fn order_contract() -> Value {
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

pub async fn handshake(app: &TestApp, intent: &str, contract: Value) -> Value {
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
    )
    .await
}

pub async fn rendered(app: &TestApp, props: Value) -> String {
    let r = app.render("order approval", order_contract(), props).await;
    r["sessionId"].as_str().unwrap().to_owned()
}
