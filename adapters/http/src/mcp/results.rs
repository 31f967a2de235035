//! MCP tool results: the body of Document 1 as `structuredContent`, a short text beside it.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use svc_domain::text as input;

/// A success result as written: the one place its shape is spelled. A tool's success is written
/// from it straight from the typed body (`Answer::into_reply`); [`ok_result`] is it as a value.
#[derive(Serialize)]
pub(crate) struct OkResult<'a, O> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "structuredContent")]
    structured_content: &'a O,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<'a, O> OkResult<'a, O> {
    pub(crate) fn new(body: &'a O, text: &'a str, meta: Option<&'a RawValue>) -> Self {
        Self {
            content: [TextContent { kind: "text", text }],
            structured_content: body,
            meta,
        }
    }
}

/// [`OkResult`] as a value, for the paths that change it or read it back (error results, the
/// operator tools); the body is copied, which the written path avoids.
pub fn ok_result(body: Value, text: &str) -> Value {
    // A `Value` body has string keys only, so it always converts.
    serde_json::to_value(OkResult::new(&body, text, None)).expect("a JSON value converts to a value")
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
