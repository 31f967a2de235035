//! What a handler answers: its typed body, the short text beside it, whether it is an error
//! result (`isError`), and result-level `_meta`.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::errors::ToolFailure;
use crate::mcp::jsonrpc::Reply;
use crate::mcp::results::{error_result, ok_result};

pub struct Answer<O> {
    body: O,
    text: String,
    is_error: bool,
    /// Result-level `_meta`, serialised already (`svc_render`'s slice holds the component code
    /// escaped once per blueprint).
    meta: Option<Box<RawValue>>,
}

/// A result whose `_meta` is written as it was serialised.
#[derive(Serialize)]
struct WithSerializedMeta<'a> {
    #[serde(flatten)]
    result: &'a Value,
    #[serde(rename = "_meta")]
    meta: &'a RawValue,
}

impl<O: Serialize> Answer<O> {
    pub fn ok(body: O, text: impl Into<String>) -> Self {
        Self {
            body,
            text: text.into(),
            is_error: false,
            meta: None,
        }
    }

    /// A result that is the tool's typed body and still an error (`svc_render` failed or
    /// refused): the host reads it, the model is told it did not work.
    pub fn error(body: O, text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::ok(body, text)
        }
    }

    /// An answer whose text is the body's JSON (the operator tools).
    pub fn json(body: O) -> Result<Self, ToolFailure> {
        let text = serde_json::to_string(&body).map_err(serialisation_failure)?;
        Ok(Self::ok(body, text))
    }

    pub fn with_serialized_meta(mut self, meta: Box<RawValue>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The MCP `CallToolResult` as a value (a `_meta` is parsed back).
    pub(crate) fn into_result(self) -> Result<Value, ToolFailure> {
        let (mut result, meta) = self.split()?;
        if let Some(meta) = meta {
            result["_meta"] = serde_json::from_str(meta.get()).map_err(serialisation_failure)?;
        }
        Ok(result)
    }

    /// The MCP `CallToolResult` as the reply it is sent as: a `_meta` is written as it was
    /// serialised, not parsed back.
    pub(crate) fn into_reply(self) -> Result<Reply, ToolFailure> {
        let (result, meta) = self.split()?;
        let Some(meta) = meta else {
            return Ok(Reply::Built(result));
        };
        let written = serde_json::to_vec(&WithSerializedMeta {
            result: &result,
            meta: &meta,
        })
        .map_err(serialisation_failure)?;
        Ok(Reply::Shared(written.into()))
    }

    /// The result without its `_meta`, and the `_meta`.
    fn split(self) -> Result<(Value, Option<Box<RawValue>>), ToolFailure> {
        let body = serde_json::to_value(&self.body).map_err(serialisation_failure)?;
        let result = if self.is_error {
            error_result(body, &self.text)
        } else {
            ok_result(body, &self.text)
        };
        Ok((result, self.meta))
    }
}

pub(crate) fn serialisation_failure(e: serde_json::Error) -> ToolFailure {
    tracing::error!(error = ?e, "a tool result did not serialise");
    ToolFailure::Rpc(crate::mcp::jsonrpc::RpcFailure::new(
        svc_protocol::INTERNAL_ERROR,
        "Internal error",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(reply: Reply) -> Value {
        let Reply::Shared(bytes) = reply else {
            panic!("a serialised _meta is written as it is")
        };
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn a_serialized_meta_answers_what_the_same_meta_as_a_value_does() {
        let meta = json!({ "ui": { "resourceUri": "ui://svc/render/s1" }, "ai.svc/render": { "component": { "code": "a \"b\"\n" } } });
        let raw = serde_json::value::to_raw_value(&meta).unwrap();
        for error in [false, true] {
            let answer = |body: Value| {
                if error {
                    Answer::error(body, "text")
                } else {
                    Answer::ok(body, "text")
                }
            };
            let body = json!({ "outcome": "rendered" });
            let mut expected = answer(body.clone()).into_result().unwrap();
            expected["_meta"] = meta.clone();
            let serialized = answer(body.clone()).with_serialized_meta(raw.clone());
            assert_eq!(written(serialized.into_reply().unwrap()), expected);
            let serialized = answer(body).with_serialized_meta(raw.clone());
            assert_eq!(serialized.into_result().unwrap(), expected, "read back as a value");
        }
    }
}
