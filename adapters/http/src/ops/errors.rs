//! Operator errors on the wire. A refusal is an error result whose `structuredContent` is
//! `{ error: { code, message } }` with Document 3's snake_case code; an argument the schema could
//! not judge (a blank name, an address that is not RFC 5322) is -32602 naming the field; a
//! storage failure is -32603 with a generic message, its cause logged.

use serde_json::json;
use svc_application::services::apps::AppServiceError;
use svc_application::services::hosted::ProviderKeyServiceError;
use svc_application::services::operator::{
    ConnectorKeyServiceError, CouponServiceError, CreditServiceError, INTERNAL_ERROR_CODE, OpsBlueprintError,
    OrgServiceError,
};
use svc_protocol::INTERNAL_ERROR;

use crate::mcp::agent_calls::invalid;
use crate::mcp::errors::ToolFailure;
use crate::mcp::jsonrpc::RpcFailure;
use crate::mcp::results::error_result;

/// An application error of an operator service, with its snake_case code.
pub trait OpsError: std::error::Error {
    fn code(&self) -> &'static str;
}

macro_rules! ops_error {
    ($($error:ty),+) => {
        $(impl OpsError for $error {
            fn code(&self) -> &'static str {
                <$error>::code(self)
            }
        })+
    };
}

ops_error!(
    AppServiceError,
    OrgServiceError,
    ConnectorKeyServiceError,
    CouponServiceError,
    OpsBlueprintError,
    ProviderKeyServiceError,
    CreditServiceError
);

/// Codes that reject an argument, and the argument they name.
const ARGUMENT_CODES: [(&str, &str); 14] = [
    ("invalid_contract", "contract"),
    ("contract_over_budget", "contract"),
    ("component_over_budget", "componentCode"),
    ("invalid_app_name", "displayName"),
    ("system_prompt_too_long", "systemPrompt"),
    ("invalid_org_name", "name"),
    ("invalid_email", "email"),
    ("invalid_invite_role", "role"),
    ("invalid_key_name", "name"),
    ("invalid_provider", "provider"),
    ("invalid_provider_key", "plaintextKey"),
    ("invalid_label", "label"),
    ("invalid_limit", "limit"),
    ("invalid_cursor", "cursor"),
];

/// Codes that are the server's fault, never the caller's.
const SERVER_CODES: [&str; 3] = [INTERNAL_ERROR_CODE, "weak_key_secret", "provider_key_unsealable"];

pub fn internal(cause: &dyn std::fmt::Debug) -> RpcFailure {
    tracing::error!(error = ?cause, "operator tool failed");
    RpcFailure::new(INTERNAL_ERROR, "Internal error")
}

pub fn tool_failure(error: impl OpsError) -> ToolFailure {
    let code = error.code();
    if SERVER_CODES.contains(&code) {
        return ToolFailure::Rpc(internal(&error));
    }
    if let Some((_, field)) = ARGUMENT_CODES.iter().find(|(c, _)| *c == code) {
        return invalid(field, &error.to_string());
    }
    refusal(code, &error.to_string())
}

/// An error result with `code` and `message`.
pub fn refusal(code: &str, message: &str) -> ToolFailure {
    ToolFailure::Result(error_result(
        json!({ "error": { "code": code, "message": message } }),
        &format!("{code}: {message}"),
    ))
}
