//! MCP tool results: the body of Document 1 as `structuredContent`, a short text beside it.

use serde_json::{Value, json};

pub fn ok_result(body: Value, text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": body })
}

pub fn error_result(body: Value, text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": body, "isError": true })
}
