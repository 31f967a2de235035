//! MCP tool results: the body of Document 1 as `structuredContent`, a short text beside it.

use serde_json::{Value, json};
use svc_domain::text as input;

pub fn ok_result(body: Value, text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": body })
}

pub fn error_result(mut body: Value, text: &str) -> Value {
    // Messages may quote input; none is sent longer than the backstop.
    if let Some(message) = body["error"]["message"].as_str() {
        body["error"]["message"] = json!(input::bounded_message(message.to_owned()));
    }
    let text = input::bounded_message(text.to_owned());
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": body, "isError": true })
}
