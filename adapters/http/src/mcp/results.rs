//! MCP tool results: the body of Document 1 as `structuredContent`, a short text beside it.

use serde_json::{Value, json};
use svc_domain::text as input;

pub fn ok_result(body: Value, text: &str) -> Value {
    // Built by moving `body` in: `json!` would copy it (it serializes every value it is given).
    let mut result = serde_json::Map::with_capacity(2);
    result.insert("content".into(), json!([{ "type": "text", "text": text }]));
    result.insert("structuredContent".into(), body);
    Value::Object(result)
}

pub fn error_result(mut body: Value, text: &str) -> Value {
    // Messages may quote input; none is sent longer than the backstop.
    if let Some(message) = body["error"]["message"].as_str() {
        body["error"]["message"] = json!(input::bounded_message(message.to_owned()));
    }
    let text = input::bounded_message(text.to_owned());
    let Value::Object(mut result) = ok_result(body, &text) else {
        unreachable!("ok_result builds an object")
    };
    result.insert("isError".into(), Value::Bool(true));
    Value::Object(result)
}
