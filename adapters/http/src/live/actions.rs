//! A card's gesture on the live channel (WebSocket frame or polling POST): checked, stored
//! durably, and answered with the frame the card waits for (`action_stored`, or an `error`
//! naming its `clientSeq`).

use serde_json::{Value, json};
use svc_application::services::agent::{AgentError, Caller, IncomingAction};
use svc_protocol::live_frames::parse_action;

use super::frames;
use crate::route_states::LiveRoutes;

/// An `agent` socket sent what only the user's card sends; nothing is stored.
pub(super) fn role_forbidden(kind: &str, payload: &Value) -> String {
    frames::frame(
        "error",
        json!({ "code": "ROLE_FORBIDDEN", "message": format!("an agent socket observes; it may not send `{kind}`"), "clientSeq": payload.get("clientSeq") }),
    )
}

pub(super) async fn action(
    state: &LiveRoutes,
    caller: &Caller,
    session_id: &str,
    envelope: &Value,
) -> Result<Vec<String>, AgentError> {
    let parsed = match parse_action(envelope, session_id) {
        Ok(parsed) => parsed,
        // Named by its clientSeq when it has one, so the card knows which action it was.
        Err(refusal) => {
            let mut payload = json!({ "code": refusal.code, "message": refusal.message });
            if let Some(client_seq) = envelope.get("clientSeq").filter(|seq| seq.is_i64()) {
                payload["clientSeq"] = client_seq.clone();
            }
            return Ok(vec![frames::frame("error", payload)]);
        }
    };
    let client_seq = parsed.client_seq;
    let incoming = IncomingAction {
        intent: parsed.intent,
        data: parsed.data,
        ui_context: parsed.ui_context,
        client_seq,
    };
    match state.agent.record_action(caller, session_id, incoming).await {
        Ok((stored, fresh)) => Ok(vec![frames::frame(
            "system",
            json!({ "event": "action_stored", "clientSeq": client_seq, "actionId": stored.action_id, "sequence": stored.sequence, "duplicate": !fresh }),
        )]),
        Err(AgentError::ContractViolation { target, violations }) => {
            let listed: Vec<Value> = violations
                .iter()
                .map(|v| json!({ "path": v.path, "message": v.message }))
                .collect();
            let mut refusal = json!({ "code": "CONTRACT_VIOLATION", "message": format!("{target} does not match the contract"), "clientSeq": client_seq, "violations": listed });
            // As on /mcp: the validator stopped looking past the listed ones (docs/agent-api.md).
            if violations.more_left_out() {
                refusal["violationsTruncated"] = json!(true);
            }
            Ok(vec![frames::frame("error", refusal)])
        }
        Err(AgentError::InvalidParams { field, rule }) => Ok(vec![frames::frame(
            "error",
            json!({ "code": "CONTRACT_VIOLATION", "message": format!("{field}: {rule}"), "clientSeq": client_seq }),
        )]),
        Err(AgentError::SessionNotFound) => Ok(vec![frames::error("SESSION_EXPIRED", "the session expired")]),
        // Not stored: the card may send the same clientSeq again after the wait.
        Err(AgentError::Busy(busy)) => Ok(vec![frames::frame(
            "error",
            json!({ "code": "SERVER_BUSY", "message": busy.to_string(), "clientSeq": client_seq, "retryAfterSeconds": busy.retry_after_seconds }),
        )]),
        Err(other) => {
            tracing::error!(error = ?other, "live channel failure storing an action");
            // Not stored either: the card may send the same clientSeq again.
            Ok(vec![frames::frame(
                "error",
                json!({ "code": "INTERNAL", "message": "internal error", "clientSeq": client_seq }),
            )])
        }
    }
}
