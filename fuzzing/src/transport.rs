//! The transports' parsers: a `/mcp` POST body and a `/ws` text frame.

use svc_protocol::jsonrpc::{Incoming, parse_request};
use svc_protocol::live_frames::{InboundFrame, MAX_CLIENT_SEQ, parse_action, parse_frame};
use svc_protocol::{INVALID_REQUEST, PARSE_ERROR};

/// The input is a `/mcp` POST body.
pub fn jsonrpc_request(data: &[u8]) {
    match parse_request(data) {
        Ok(Incoming::Request { id, params, .. }) => {
            assert!(id.is_string() || id.is_number(), "a request id is a string or a number");
            assert!(params.is_object() || params.is_null(), "params are an object or absent");
        }
        Ok(Incoming::Notification { .. } | Incoming::NoReply) => {}
        Err(refusal) => assert!(
            [PARSE_ERROR, INVALID_REQUEST].contains(&refusal.code),
            "a refused body is a parse error or an invalid request, not {}",
            refusal.code
        ),
    }
}

/// The input is a `/ws` text frame (UTF-8, as WebSocket text frames are); an action's envelope
/// is also checked as on a socket bound to session `s`.
pub fn ws_frame(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_frame(text) {
        Ok(InboundFrame::Action(envelope)) => {
            if let Ok(action) = parse_action(&envelope, "s") {
                assert!(
                    action.client_seq.is_none_or(|seq| (0..=MAX_CLIENT_SEQ).contains(&seq)),
                    "a kept clientSeq is exact"
                );
            }
        }
        Ok(_) => {}
        Err(refusal) => assert_eq!(refusal.code, "BAD_FRAME"),
    }
}
