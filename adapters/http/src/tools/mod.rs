//! One definition per tool, shared by `/mcp` (and its per-app endpoints) and `/ops`: a tool is a
//! type implementing [`ToolDefinition`] (name, description, annotations, typed input and output)
//! plus its plane's handler trait. `tools/list` declarations, argument validation and dispatch
//! all come from that one registration, so a name is written once.

mod annotations;
mod answer;
mod declared;

pub use annotations::Annotations;
pub use answer::Answer;
pub(crate) use answer::serialisation_failure;
pub use declared::Declared;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use svc_protocol::INVALID_PARAMS;

use crate::errors::ToolFailure;
use crate::mcp::jsonrpc::RpcFailure;

/// The wire side of a tool: what `tools/list` publishes and what a call carries.
pub trait ToolDefinition: 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const ANNOTATIONS: Annotations;
    /// The arguments; their schema is the published `inputSchema` and is checked before dispatch.
    type Input: DeserializeOwned + JsonSchema + Send;
    /// The `structuredContent`; its schema is the published `outputSchema`.
    type Output: Serialize + JsonSchema + Send;
}

/// The arguments of a call as the tool's input type; -32602 when they do not fit.
pub(crate) fn parse_arguments<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolFailure> {
    serde_json::from_value(arguments)
        .map_err(|e| ToolFailure::Rpc(RpcFailure::new(INVALID_PARAMS, format!("Invalid params: {e}"))))
}

/// -32602 naming the field and the rule a handler found broken.
pub(crate) fn invalid(field: &str, rule: &str) -> ToolFailure {
    ToolFailure::Rpc(RpcFailure::new(
        INVALID_PARAMS,
        format!("Invalid params: {field}: {rule}"),
    ))
}

/// RFC 3339 UTC with milliseconds: every time the tools answer as a string.
pub(crate) fn iso(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod names_defined_once;
