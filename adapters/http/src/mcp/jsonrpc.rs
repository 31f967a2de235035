//! JSON-RPC 2.0 envelopes: what a POST body may be, and the replies we send.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{IntoResponse, Response};
use serde_json::{Value, json};
use svc_protocol::{INVALID_REQUEST, PARSE_ERROR};

/// One parsed message.
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

/// A JSON-RPC failure with its HTTP status.
#[derive(Debug)]
pub struct RpcFailure {
    pub status: StatusCode,
    pub code: i64,
    pub message: String,
    /// Boxed: a `Value` (an indexmap under `preserve_order`) would make every `Result` carrying
    /// this failure large.
    pub data: Option<Box<Value>>,
    pub headers: Vec<(&'static str, String)>,
}

impl RpcFailure {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::OK,
            code,
            message: svc_domain::text::bounded_message(message.into()),
            data: None,
            headers: vec![],
        }
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    pub fn with_header(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    /// The JSON-RPC error message itself (the body of [`RpcFailure::into_response`]).
    pub fn message_for(&self, id: Value) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = (**data).clone();
        }
        json!({ "jsonrpc": "2.0", "id": id, "error": error })
    }

    pub fn into_response(self, id: Value) -> Response {
        let body = self.message_for(id);
        let mut response = (self.status, poem::web::Json(body)).into_response();
        for (name, value) in self.headers {
            if let Ok(v) = value.parse() {
                response.headers_mut().insert(name, v);
            }
        }
        response
    }
}

/// A method's result: built for this request, or a document serialized once and shared by every
/// request that asks for it (`tools/list`).
pub enum Reply {
    Built(Value),
    Shared(Arc<str>),
}

impl From<Value> for Reply {
    fn from(value: Value) -> Self {
        Self::Built(value)
    }
}

pub fn success(id: Value, result: Reply) -> Response {
    match result {
        Reply::Built(result) => {
            poem::web::Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response()
        }
        // The same bytes as the `Json` arm would write (keys in this order, compact).
        Reply::Shared(result) => Response::builder()
            .content_type("application/json; charset=utf-8")
            .body(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)),
    }
}

/// Parses a POST body. Batches are not part of current MCP revisions and are refused.
pub fn parse(body: &[u8]) -> Result<Incoming, RpcFailure> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcFailure::new(PARSE_ERROR, format!("Parse error: {e}")).with_status(StatusCode::BAD_REQUEST))?;
    let invalid = |why: &str| {
        RpcFailure::new(INVALID_REQUEST, format!("Invalid Request: {why}")).with_status(StatusCode::BAD_REQUEST)
    };
    let Some(object) = value.as_object() else {
        return Err(invalid("the body must be a JSON-RPC 2.0 object"));
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = object.get("method") else {
        if object.contains_key("result") || object.contains_key("error") {
            return Ok(Incoming::NoReply);
        }
        return Err(invalid("`method` is missing"));
    };
    let Some(method) = method.as_str() else {
        return Err(invalid("`method` must be a string"));
    };
    let Some(id) = object.get("id") else {
        return Ok(Incoming::Notification {
            method: method.to_owned(),
            params: object.get("params").cloned().unwrap_or(Value::Null),
        });
    };
    if !(id.is_string() || id.is_number()) {
        return Err(invalid("`id` must be a string or a number"));
    }
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    if !(params.is_object() || params.is_null()) {
        return Err(invalid("`params` must be an object"));
    }
    Ok(Incoming::Request {
        id: id.clone(),
        method: method.to_owned(),
        params,
    })
}
