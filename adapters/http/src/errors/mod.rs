//! The one error table: every error kind of domain and application maps here, by an exhaustive
//! match per error type (a new variant does not compile until it is placed), to how it reaches
//! the wire: a JSON-RPC code, a tool error result with its snake_case name, or an HTTP status.
//!
//! - [`agent`]: `AgentError` on `/mcp` (JSON-RPC codes and error results with their data).
//! - [`auth`]: `AuthError` on the tool routes (HTTP 401 / 403 with their JSON-RPC codes).
//! - [`operator`]: the operator services' errors on `/ops` ([`ErrorKind`]) and the invite
//!   acceptance route's HTTP statuses.

mod agent;
mod auth;
mod operator;
#[cfg(test)]
mod tests;

pub(crate) use agent::{map_agent_error, overloaded, rate_limited, server_busy};
pub use auth::{auth_failure, deprovisioned};
pub use operator::{OpsError, accept_invite_status, internal};

use serde_json::{Value, json};
use svc_protocol::INVALID_PARAMS;

use crate::mcp::jsonrpc::RpcFailure;
use crate::mcp::results::error_result;

/// A tool call ends as a result (possibly `isError`) or as a protocol failure.
#[derive(Debug)]
pub enum ToolFailure {
    Result(Value),
    Rpc(RpcFailure),
}

/// How an error reaches a tool caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// JSON-RPC -32602 naming this argument: the caller sent a value no rule admits.
    Argument(&'static str),
    /// An error result `{ error: { code, message } }` with this snake_case code (Document 3).
    Refusal(&'static str),
    /// JSON-RPC -32014 with HTTP 503 and `Retry-After`: the generation queue is saturated.
    Overloaded { retry_after_seconds: u64 },
    /// JSON-RPC -32014 with HTTP 503 and `Retry-After`, `data.code` `SERVER_BUSY`: no CPU slot
    /// for heavy work freed within `limits.cpu_heavy_wait_ms`.
    Busy { retry_after_seconds: u64 },
    /// A rate-limited tool call (Document 2): an error result with code `rate_limited` and
    /// `retryAfterMs`, never HTTP 429.
    RateLimited { retry_after_ms: u64 },
    /// JSON-RPC -32603 with a generic message; the cause is logged, never sent.
    Internal,
}

impl ErrorKind {
    /// The failure a tool answers, with `message` (the error's own text) where one is sent.
    pub fn failure(self, message: &str) -> ToolFailure {
        match self {
            Self::Argument(field) => ToolFailure::Rpc(RpcFailure::new(
                INVALID_PARAMS,
                format!("Invalid params: {field}: {message}"),
            )),
            Self::Refusal(code) => ToolFailure::Result(error_result(
                json!({ "error": { "code": code, "message": message } }),
                &format!("{code}: {message}"),
            )),
            Self::Overloaded { retry_after_seconds } => ToolFailure::Rpc(overloaded(retry_after_seconds)),
            Self::Busy { retry_after_seconds } => ToolFailure::Rpc(server_busy(retry_after_seconds)),
            Self::RateLimited { retry_after_ms } => ToolFailure::Result(rate_limited_result(message, retry_after_ms)),
            Self::Internal => ToolFailure::Rpc(internal(&message)),
        }
    }
}

/// The one shape of a rate-limited tool call (Document 2, Errors): a tool result with `isError`,
/// code `rate_limited` and the retry decision `retryAfterMs`.
pub(crate) fn rate_limited_result(message: &str, retry_after_ms: u64) -> Value {
    error_result(
        json!({ "error": { "code": "rate_limited", "message": message, "retryAfterMs": retry_after_ms } }),
        &format!("rate_limited: {message}"),
    )
}
