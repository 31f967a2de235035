//! `AgentError` on `/mcp`: JSON-RPC codes (with Document 1's `data`) and error results.

use poem::http::StatusCode;
use serde_json::{Value, json};
use svc_application::services::agent::AgentError;
use svc_protocol::{GENERATION_OVERLOADED, INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND};

use super::{ErrorKind, ToolFailure};
use crate::mcp::jsonrpc::RpcFailure;
use crate::mcp::results::error_result;

pub fn map_agent_error(e: AgentError) -> ToolFailure {
    match e {
        AgentError::SessionNotFound => ToolFailure::Rpc(
            RpcFailure::new(SESSION_NOT_FOUND, "Session not found").with_data(json!({ "code": "NOT_FOUND" })),
        ),
        AgentError::InvalidParams { field, rule } => ToolFailure::Rpc(RpcFailure::new(
            INVALID_PARAMS,
            format!("Invalid params: {field}: {rule}"),
        )),
        AgentError::OverBudget { field, over } => ToolFailure::Rpc(
            RpcFailure::new(INVALID_PARAMS, format!("Invalid params: {field}: {over}")).with_data(json!({
                "code": "over_budget",
                "budget": over.budget.name(),
                "limit": over.budget.limit(),
                "path": over.path,
            })),
        ),
        AgentError::ContractViolation { target, violations } => {
            let listed: Vec<Value> = violations
                .iter()
                .map(|v| json!({ "path": v.path, "message": v.message }))
                .collect();
            let mut first = violations
                .first()
                .map(|v| format!("{}{}: {}", target, v.path, v.message))
                .unwrap_or_default();
            // The validator stopped looking past the listed ones (docs/agent-api.md).
            if violations.more_left_out() {
                first.push_str(&format!(
                    " (the list stops at the first {}; there may be more)",
                    violations.len()
                ));
            }
            let mut error = json!({ "code": "contract_violation", "message": format!("{target} do not match the contract: {first}"), "target": target, "violations": listed });
            if violations.more_left_out() {
                error["violationsTruncated"] = json!(true);
            }
            ToolFailure::Result(error_result(
                json!({ "error": error }),
                &format!("Contract violation: {first}"),
            ))
        }
        AgentError::AppAccessDenied => ErrorKind::Refusal("app_access_denied").failure("appId is not the caller's app"),
        AgentError::NoSource(reason) => ErrorKind::Refusal("no_source").failure(&reason),
        AgentError::Overloaded { retry_after_seconds } => ToolFailure::Rpc(overloaded(retry_after_seconds)),
        AgentError::Busy(busy) => ToolFailure::Rpc(server_busy(busy.retry_after_seconds)),
        AgentError::Internal(cause) => {
            tracing::error!(error = ?cause, "tool call failed");
            ToolFailure::Rpc(RpcFailure::new(INTERNAL_ERROR, "Internal error"))
        }
    }
}

/// HTTP 503 with `Retry-After` and JSON-RPC -32014: the generation queue is saturated.
pub(crate) fn overloaded(retry_after_seconds: u64) -> RpcFailure {
    RpcFailure::new(GENERATION_OVERLOADED, "Generation queue overloaded; retry later")
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .with_data(json!({ "code": "GENERATION_OVERLOADED", "retryAfterSeconds": retry_after_seconds }))
        .with_header("retry-after", retry_after_seconds.to_string())
}

/// HTTP 503 with `Retry-After` and JSON-RPC -32014 (the spec's overload code), `data.code`
/// `SERVER_BUSY`: every CPU slot for heavy work (schemas, TSX, render checks) stayed taken for the
/// whole wait.
pub(crate) fn server_busy(retry_after_seconds: u64) -> RpcFailure {
    RpcFailure::new(GENERATION_OVERLOADED, "Server busy with other heavy work; retry later")
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .with_data(json!({ "code": "SERVER_BUSY", "retryAfterSeconds": retry_after_seconds }))
        .with_header("retry-after", retry_after_seconds.to_string())
}

/// A tool call the limiter refused (Document 2): an error result, never HTTP 429.
pub(crate) fn rate_limited(limited: &svc_application::services::tool_call_limit::ToolCallLimited) -> Value {
    let message = format!(
        "at most {} tool calls per {} seconds; retry in {} ms",
        limited.limit, limited.window_seconds, limited.retry_after_ms
    );
    super::rate_limited_result(&message, limited.retry_after_ms)
}
