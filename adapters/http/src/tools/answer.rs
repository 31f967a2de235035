//! What a handler answers: its typed body, the short text beside it, whether it is an error
//! result (`isError`), and result-level `_meta`.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::errors::ToolFailure;
use crate::mcp::jsonrpc::Reply;
use crate::mcp::results::{OkResult, error_result, ok_result};

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

    /// The MCP `CallToolResult` as the reply it is sent as, serialised here: a success straight
    /// from the typed body (no `Value` tree built and walked again: issue 18), a `_meta` written
    /// as it was serialised, not parsed back.
    pub(crate) fn into_reply(self) -> Result<Reply, ToolFailure> {
        if !self.is_error {
            // Room for a typical result and its `_meta` at once: growing from `to_vec`'s 128 bytes
            // was a third of the writing (a render's `_meta` carries its component's code).
            let meta_length = self.meta.as_deref().map_or(0, |meta| meta.get().len());
            let mut written = Vec::with_capacity(1024 + meta_length);
            serde_json::to_writer(
                &mut written,
                &OkResult::new(&self.body, &self.text, self.meta.as_deref()),
            )
            .map_err(serialisation_failure)?;
            return Ok(Reply::Shared(written.into()));
        }
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
    fn the_reply_is_the_result_as_a_value_would_be_written() {
        #[derive(Serialize)]
        struct Body {
            outcome: &'static str,
            count: u32,
            nested: Value,
        }
        let body = || Body {
            outcome: "rendered",
            count: 3,
            nested: json!({ "z": 1, "a": [true, null, "x\"y"] }),
        };
        for error in [false, true] {
            let answer = || {
                if error {
                    Answer::error(body(), "a \"quoted\" text")
                } else {
                    Answer::ok(body(), "a \"quoted\" text")
                }
            };
            let expected = answer().into_result().unwrap();
            let reply = answer().into_reply().unwrap();
            let written = match reply {
                Reply::Shared(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
                Reply::Built(value) => value.to_string(),
                _ => panic!("a tool's answer is ready"),
            };
            // The same members in the same order: the text as sent is the value's.
            assert_eq!(written, expected.to_string(), "error: {error}");
        }
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
