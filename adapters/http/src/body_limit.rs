//! Request-body ceilings. A declared `Content-Length` over the limit is refused before anything
//! is read; a chunked body is read up to the limit and refused past it. Either way the answer is
//! 413 `{ error: { code: "PAYLOAD_TOO_LARGE", message } }`. (poem's own `SizeLimit` refuses
//! chunked bodies outright, and handlers that read a whole body had no ceiling of their own.)

use poem::http::{StatusCode, header};
use poem::web::Json;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};
use serde_json::json;

/// The largest body of any route: a `/mcp` or `/ops` JSON-RPC request.
pub const MAX_BODY_BYTES: usize = crate::mcp::MAX_BODY_BYTES;
/// `POST /_svc/pair`: a pair code and a client name.
pub const PAIR_MAX_BODY_BYTES: usize = 16 * 1024;

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
            Some(length) if length > self.max_bytes as u64 => return Ok(too_large(self.max_bytes)),
            Some(_) => {}
            None if req.headers().contains_key(header::TRANSFER_ENCODING) => {
                match req.take_body().into_bytes_limit(self.max_bytes).await {
                    Ok(bytes) => req.set_body(bytes),
                    Err(poem::error::ReadBodyError::PayloadTooLarge) => return Ok(too_large(self.max_bytes)),
                    Err(_) => {
                        return Ok((StatusCode::BAD_REQUEST, "the request body could not be read").into_response());
                    }
                }
            }
            None => {}
        }
        self.inner.call(req).await.map(IntoResponse::into_response)
    }
}
