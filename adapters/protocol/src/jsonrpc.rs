//! A `/mcp` POST body as a typed JSON-RPC 2.0 message, or the JSON-RPC error that refuses it.
//! Pure (bytes in, no I/O): the HTTP adapter answers a refusal with status 400, and the fuzz
//! target `jsonrpc_request` runs it on arbitrary bytes.

use serde_json::Value;

use crate::{INVALID_REQUEST, PARSE_ERROR};

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification: answered 202 with no body.
    Notification {
        method: String,
        params: Value,
    },
    /// A client's response: answered 202 with no body.
    NoReply,
}

/// Why a body is not a JSON-RPC request: `PARSE_ERROR` or `INVALID_REQUEST`, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRefusal {
    pub code: i64,
    pub message: String,
}

/// Parses a POST body. Batches are not part of current MCP revisions and are refused.
pub fn parse_request(body: &[u8]) -> Result<Incoming, RequestRefusal> {
    let value: Value = serde_json::from_slice(body).map_err(|e| RequestRefusal {
        code: PARSE_ERROR,
        message: format!("Parse error: {e}"),
    })?;
    let invalid = |why: &str| RequestRefusal {
        code: INVALID_REQUEST,
        message: format!("Invalid Request: {why}"),
    };
    // Owned, so `params` and `id` move out instead of being copied.
    let Value::Object(mut object) = value else {
        return Err(invalid("the body must be a JSON-RPC 2.0 object"));
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = object.remove("method") else {
        if object.contains_key("result") || object.contains_key("error") {
            return Ok(Incoming::NoReply);
        }
        return Err(invalid("`method` is missing"));
    };
    let Value::String(method) = method else {
        return Err(invalid("`method` must be a string"));
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    let Some(id) = object.remove("id") else {
        return Ok(Incoming::Notification { method, params });
    };
    if !(id.is_string() || id.is_number()) {
        return Err(invalid("`id` must be a string or a number"));
    }
    if !(params.is_object() || params.is_null()) {
        return Err(invalid("`params` must be an object"));
    }
    Ok(Incoming::Request { id, method, params })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: &str) -> Result<Incoming, RequestRefusal> {
        parse_request(body.as_bytes())
    }

    #[test]
    fn a_request_a_notification_and_a_response_are_told_apart() {
        let request = parse(r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":1}}"#).unwrap();
        assert_eq!(
            request,
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: json!({ "a": 1 })
            }
        );
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification { .. })
        ));
        assert_eq!(parse(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Ok(Incoming::NoReply));
    }

    #[test]
    fn bad_bodies_are_refused_with_the_json_rpc_code() {
        assert_eq!(parse("{").unwrap_err().code, PARSE_ERROR);
        for (body, why) in [
            ("[]", "the body must be a JSON-RPC 2.0 object"),
            (r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, "`jsonrpc` must be \"2.0\""),
            (r#"{"jsonrpc":"2.0","id":1}"#, "`method` is missing"),
            (r#"{"jsonrpc":"2.0","id":1,"method":3}"#, "`method` must be a string"),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
                "`id` must be a string or a number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
                "`params` must be an object",
            ),
        ] {
            let refusal = parse(body).unwrap_err();
            assert_eq!(refusal.code, INVALID_REQUEST, "{body}");
            assert_eq!(refusal.message, format!("Invalid Request: {why}"), "{body}");
        }
    }
}
