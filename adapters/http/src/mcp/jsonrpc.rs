//! JSON-RPC 2.0 envelopes: what a POST body may be, and the replies we send.

use poem::http::{HeaderValue, StatusCode, header};
use poem::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer_pieces::{self, AnswerPiece};
pub use super::later::Later;
use crate::content_coding::ContentCoding;
pub use svc_protocol::jsonrpc::Incoming;

/// The type of every JSON answer, from static text (a response's `content_type(&str)` parses
/// and copies it again per answer).
pub(crate) fn json_utf8() -> HeaderValue {
    HeaderValue::from_static("application/json; charset=utf-8")
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

/// A method's result: built for this request, a document serialized once and shared by every
/// request that asks for it (`tools/list`), one assembled from kept serialized pieces (a
/// `resources/read` template filled in, written without being copied into one string, and sent
/// gzipped to a client that accepts it), or one that is not ready yet (a long-poll, [`Later`]).
pub enum Reply {
    Built(Value),
    Shared(bytes::Bytes),
    Pieces(Vec<AnswerPiece>),
    Later(Later),
}

impl Reply {
    /// The result as a value (a shared document is parsed back: for the rare reader that needs it,
    /// a `resources/read`; a later result is not waited for here and reads as `null`).
    pub fn into_value(self) -> Value {
        match self {
            Self::Built(value) => value,
            Self::Shared(text) => serde_json::from_slice(&text).unwrap_or(Value::Null),
            Self::Pieces(pieces) => serde_json::from_slice(&texts(&pieces).concat()).unwrap_or(Value::Null),
            Self::Later(_) => Value::Null,
        }
    }
}

impl From<Value> for Reply {
    fn from(value: Value) -> Self {
        Self::Built(value)
    }
}

/// The success message answering request `id`; `coding` is what the client accepts, used where
/// the answer has kept pieces to send compressed.
pub fn success(id: Value, result: Reply, coding: ContentCoding) -> Response {
    match result {
        Reply::Built(result) => Response::builder()
            .header(header::CONTENT_TYPE, json_utf8())
            .body(success_message(&id, &result)),
        // The same bytes as the `Json` arm would write (keys in this order, compact); the shared
        // document goes to hyper as it is, not copied into the envelope.
        Reply::Shared(result) => enveloped(id, [result]),
        Reply::Pieces(pieces) => enveloped_pieces(id, pieces, coding),
        Reply::Later(later) => later.respond(id),
    }
}

/// The success message as text (one server-sent event's data): the bytes [`success`] writes. A
/// later result is waited for, and its failure is the JSON-RPC error message.
pub async fn success_text(id: Value, result: Reply) -> String {
    let pieces = match result {
        Reply::Built(result) => return utf8(success_message(&id, &result)),
        Reply::Shared(result) => vec![result],
        Reply::Pieces(pieces) => texts(&pieces),
        Reply::Later(later) => {
            return match later.ready().await {
                Ok(ready) => Box::pin(success_text(id, ready)).await,
                Err(failure) => failure.message_for(id).to_string(),
            };
        }
    };
    utf8(envelope_around(id, pieces).flat_map(|piece| piece.to_vec()).collect())
}

/// Serialised JSON as text (it is UTF-8).
fn utf8(text: Vec<u8>) -> String {
    String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`, written straight from the two values (an
/// envelope object built around them would hash and allocate its keys first: issue 18).
fn success_message(id: &Value, result: &Value) -> Vec<u8> {
    let mut message = Vec::with_capacity(64);
    message.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing a `Value` into memory cannot fail: its keys are strings and a `Vec` takes any write.
    serde_json::to_writer(&mut message, id).expect("a JSON value serialises into memory");
    message.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut message, result).expect("a JSON value serialises into memory");
    message.push(b'}');
    message
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<pieces>}` written from the pieces as they are.
fn enveloped(id: Value, pieces: impl IntoIterator<Item = bytes::Bytes>) -> Response {
    let body = super::pieces_body::PiecesBody::new(envelope_around(id, pieces));
    Response::builder()
        .header(header::CONTENT_TYPE, json_utf8())
        .body(body.into_poem())
}

/// [`enveloped`] for kept pieces: gzipped when the client accepts it. Either way the answer
/// varies with `Accept-Encoding`, and says so to caches.
fn enveloped_pieces(id: Value, pieces: Vec<AnswerPiece>, coding: ContentCoding) -> Response {
    let builder = Response::builder()
        .header(header::CONTENT_TYPE, json_utf8())
        .header(header::VARY, HeaderValue::from_static("accept-encoding"));
    match coding {
        ContentCoding::Identity => {
            let body = super::pieces_body::PiecesBody::new(envelope_around(id, texts(&pieces)));
            builder.body(body.into_poem())
        }
        ContentCoding::Gzip => {
            let message: Vec<AnswerPiece> = std::iter::once(AnswerPiece::Fresh(envelope_head(&id)))
                .chain(pieces)
                .chain(std::iter::once(AnswerPiece::Fresh(envelope_tail())))
                .collect();
            let body = super::pieces_body::PiecesBody::new(answer_pieces::gzip(&message));
            builder
                .header(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))
                .body(body.into_poem())
        }
    }
}

fn texts(pieces: &[AnswerPiece]) -> Vec<bytes::Bytes> {
    pieces.iter().map(AnswerPiece::text).collect()
}

/// The pieces of a success message around a result serialised already.
fn envelope_around(id: Value, result: impl IntoIterator<Item = bytes::Bytes>) -> impl Iterator<Item = bytes::Bytes> {
    std::iter::once(envelope_head(&id))
        .chain(result)
        .chain(std::iter::once(envelope_tail()))
}

fn envelope_head(id: &Value) -> bytes::Bytes {
    let mut head = Vec::with_capacity(48);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut head, id).expect("a JSON value serialises");
    head.extend_from_slice(br#","result":"#);
    bytes::Bytes::from(head)
}

fn envelope_tail() -> bytes::Bytes {
    bytes::Bytes::from_static(b"}")
}

/// Parses a POST body (`svc_protocol::jsonrpc::parse_request`); a refusal is answered 400.
pub fn parse(body: &[u8]) -> Result<Incoming, RpcFailure> {
    svc_protocol::jsonrpc::parse_request(body).map_err(refusal)
}

/// A body refused as not a JSON-RPC request: answered 400.
pub fn refusal(refused: svc_protocol::jsonrpc::RequestRefusal) -> RpcFailure {
    RpcFailure::new(refused.code, refused.message).with_status(StatusCode::BAD_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_success_as_text_is_the_same_message_whatever_the_reply_holds() {
        let result = json!({ "content": [{ "type": "text", "text": "a \"quoted\" line" }] });
        let bytes = bytes::Bytes::from(serde_json::to_vec(&result).unwrap());
        let split = bytes.len() / 2;
        let later = result.clone();
        let replies = [
            Reply::Built(result.clone()),
            Reply::Shared(bytes.clone()),
            Reply::Pieces(vec![
                AnswerPiece::Fresh(bytes.slice(..split)),
                AnswerPiece::Kept(std::sync::Arc::new(answer_pieces::KeptText::new(bytes.slice(split..)))),
            ]),
            Reply::Later(Later::new(async move { Ok(Reply::Built(later)) })),
        ];
        let expected = json!({ "jsonrpc": "2.0", "id": 7, "result": result });
        for reply in replies {
            let text = success_text(json!(7), reply).await;
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
        }
    }
}
