//! What a handler answers: its typed body, the short text beside it, whether it is an error
//! result (`isError`), and result-level `_meta`.

use serde::Serialize;
use serde_json::Value;

use crate::errors::ToolFailure;
use crate::mcp::results::{error_result, ok_result};

pub struct Answer<O> {
    body: O,
    text: String,
    is_error: bool,
    meta: Option<Value>,
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

    pub fn with_meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The MCP `CallToolResult`.
    pub(crate) fn into_result(self) -> Result<Value, ToolFailure> {
        let body = serde_json::to_value(&self.body).map_err(serialisation_failure)?;
        let mut result = if self.is_error {
            error_result(body, &self.text)
        } else {
            ok_result(body, &self.text)
        };
        if let Some(meta) = self.meta {
            result["_meta"] = meta;
        }
        Ok(result)
    }
}

fn serialisation_failure(e: serde_json::Error) -> ToolFailure {
    tracing::error!(error = ?e, "a tool result did not serialise");
    ToolFailure::Rpc(crate::mcp::jsonrpc::RpcFailure::new(
        svc_protocol::INTERNAL_ERROR,
        "Internal error",
    ))
}
