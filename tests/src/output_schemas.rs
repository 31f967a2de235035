//! Every tool result a black-box test receives is checked against the `outputSchema` the server
//! publishes for that tool (MCP 2025-06-18: `structuredContent` must validate against it). The
//! published schemas are fetched with `tools/list` once per server, route and bearer, and cached.
//!
//! Checked: results without `isError` (as MCP clients check them). A tool the caller's
//! `tools/list` does not show (a runtime tool with MCP-Apps off) has no published schema there
//! and is not checked by this caller.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Value, json};

type Validators = Arc<HashMap<String, jsonschema::Validator>>;

static PUBLISHED: LazyLock<Mutex<HashMap<String, Validators>>> = LazyLock::new(Default::default);

/// Panics when the `tools/call` response `body` is a result whose `structuredContent` does not
/// validate against `tool`'s published `outputSchema` at `url` (`.../mcp` or `.../ops`).
pub async fn check(client: &reqwest::Client, url: &str, bearer: Option<&str>, tool: &str, body: &Value) {
    let result = &body["result"];
    if !result.is_object() || result.get("isError").is_some_and(|e| e == &json!(true)) {
        return;
    }
    let validators = published(client, url, bearer).await;
    let Some(validator) = validators.get(tool) else {
        return;
    };
    let structured = &result["structuredContent"];
    let violations: Vec<String> = validator
        .iter_errors(structured)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        violations.is_empty(),
        "{tool}: structuredContent does not match its outputSchema: {violations:?}\n{structured}"
    );
}

/// The output validators `tools/list` publishes to this caller, by tool name.
pub async fn published(client: &reqwest::Client, url: &str, bearer: Option<&str>) -> Validators {
    let key = format!("{url}\u{0}{}", bearer.unwrap_or_default());
    if let Some(cached) = PUBLISHED.lock().expect("cache").get(&key) {
        return Arc::clone(cached);
    }
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": "tools", "method": "tools/list" }));
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    let listed: Value = request
        .send()
        .await
        .expect("tools/list")
        .json()
        .await
        .expect("tools/list body");
    let validators: HashMap<String, jsonschema::Validator> = listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| {
            let name = tool["name"].as_str().expect("a tool has a name").to_owned();
            let schema = &tool["outputSchema"];
            assert_eq!(schema["type"], "object", "{name}: outputSchema is an object schema");
            let validator = jsonschema::validator_for(schema)
                .unwrap_or_else(|e| panic!("{name}: outputSchema does not compile: {e}"));
            (name, validator)
        })
        .collect();
    let validators = Arc::new(validators);
    PUBLISHED.lock().expect("cache").insert(key, Arc::clone(&validators));
    validators
}
