//! Request-body ceilings. A declared `Content-Length` over the limit is refused before anything
//! is read; a chunked body is read up to the limit and refused past it. Either way the answer is
//! 413 `{ error: { code: "PAYLOAD_TOO_LARGE", message } }`. (poem's own `SizeLimit` refuses
//! chunked bodies outright, and handlers that read a whole body had no ceiling of their own.)
//!
//! Before answering, what the client is still sending is read and dropped, up to
//! [`DRAIN_BYTES`] within [`DRAIN_TIME`]: a client that is mid-upload then reads the 413 instead
//! of a connection reset. Past either bound the connection just closes.

use std::time::Duration;

use futures_util::StreamExt;
use poem::http::{StatusCode, header};
use poem::web::Json;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};
use serde_json::json;

/// The largest body of any route: a `/mcp` or `/ops` JSON-RPC request.
pub const MAX_BODY_BYTES: usize = crate::mcp::MAX_BODY_BYTES;
/// `POST /_svc/pair`: a pair code and a client name.
pub const PAIR_MAX_BODY_BYTES: usize = 16 * 1024;

/// The most of a refused body read (and dropped) so its sender sees the answer.
const DRAIN_BYTES: usize = 4 * 1024 * 1024;
/// The longest a refused body is read for.
const DRAIN_TIME: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy)]
pub struct BodyLimit {
    max_bytes: usize,
}

impl BodyLimit {
    pub fn new(max_bytes: usize) -> Self {
        Self { max_bytes }
    }
}

pub fn too_large(max_bytes: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        Json(json!({ "error": { "code": "PAYLOAD_TOO_LARGE", "message": format!("the request body is larger than {max_bytes} bytes") } })),
    )
        .into_response()
}

impl<E: Endpoint> Middleware<E> for BodyLimit {
    type Output = BodyLimitEndpoint<E>;

    fn transform(&self, inner: E) -> Self::Output {
        BodyLimitEndpoint {
            inner,
            max_bytes: self.max_bytes,
        }
    }
}

pub struct BodyLimitEndpoint<E> {
    inner: E,
    max_bytes: usize,
}

impl<E: Endpoint> Endpoint for BodyLimitEndpoint<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        match declared {
            // hyper reads no more than a declared length.
            Some(length) if length > self.max_bytes as u64 => {
                if length <= (self.max_bytes + DRAIN_BYTES) as u64 {
                    drain(req.take_body(), DRAIN_BYTES).await;
                }
                return Ok(too_large(self.max_bytes));
            }
            Some(_) => {}
            None if req.headers().contains_key(header::TRANSFER_ENCODING) => {
                match read_up_to(req.take_body(), self.max_bytes).await {
                    Ok(bytes) => req.set_body(bytes),
                    Err(BodyRead::TooLarge) => return Ok(too_large(self.max_bytes)),
                    Err(BodyRead::Broken) => {
                        return Ok((StatusCode::BAD_REQUEST, "the request body could not be read").into_response());
                    }
                }
            }
            None => {}
        }
        self.inner.call(req).await.map(IntoResponse::into_response)
    }
}

enum BodyRead {
    TooLarge,
    Broken,
}

/// The whole body when it is at most `max_bytes`; past that, the rest is drained and dropped.
async fn read_up_to(body: poem::Body, max_bytes: usize) -> Result<Vec<u8>, BodyRead> {
    let mut stream = body.into_bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| BodyRead::Broken)?;
        if bytes.len() + chunk.len() > max_bytes {
            drain_stream(stream, DRAIN_BYTES).await;
            return Err(BodyRead::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

async fn drain(body: poem::Body, limit: usize) {
    drain_stream(body.into_bytes_stream(), limit).await;
}

/// Reads and drops up to `limit` bytes within [`DRAIN_TIME`].
async fn drain_stream<S, T, E>(mut stream: S, limit: usize)
where
    S: futures_util::Stream<Item = Result<T, E>> + Unpin,
    T: AsRef<[u8]>,
{
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        let mut read = 0;
        while let Some(Ok(chunk)) = stream.next().await {
            read += chunk.as_ref().len();
            if read > limit {
                break;
            }
        }
    })
    .await;
}
