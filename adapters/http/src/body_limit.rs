//! Request-body ceilings. A declared `Content-Length` over the limit is refused before anything
//! is read; a chunked body (or an HTTP/2 body of no declared length) is read up to the limit and
//! refused past it. Either way the answer is
//! 413 `{ error: { code: "PAYLOAD_TOO_LARGE", message } }`. (poem's own `SizeLimit` refuses
//! chunked bodies outright, and handlers that read a whole body had no ceiling of their own.)
//!
//! A body that does not arrive in time (the connection layer cuts it off after a pause of the
//! idle timeout, or after the body read timeout in all) is answered 408 `REQUEST_TIMEOUT`; one
//! refused for the server's budget of bodies in flight 503 `SERVER_BUSY` with `Retry-After`; one
//! that breaks off 400 `UNREADABLE_BODY`.
//!
//! Before answering, what the client is still sending is read and dropped, up to
//! [`DRAIN_BYTES`] within [`DRAIN_TIME`]: a client that is mid-upload then reads the 413 instead
//! of a connection reset. Past either bound the connection just closes.

use std::future::Future;
use std::time::Duration;

use futures_util::future::Either;
use futures_util::{FutureExt, StreamExt};
use poem::http::{StatusCode, Version, header};
use poem::web::Json;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};
use serde_json::json;
use svc_application::services::cpu_gate::CpuBusy;

use crate::layered;

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

    /// A declared length within the limit (or no body) passes on as it is; only a body that must
    /// be read or refused first takes the slower, boxed path.
    fn call(&self, req: Request) -> impl Future<Output = poem::Result<Response>> + Send {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let undeclared_length =
            req.headers().contains_key(header::TRANSFER_ENCODING) || req.version() >= Version::HTTP_2;
        match declared {
            // hyper reads no more than a declared length.
            Some(length) if length > self.max_bytes as u64 => Either::Left(self.refuse(req, length).boxed()),
            // A chunked HTTP/1.1 body, or an HTTP/2 one of no declared length (HTTP/2 has no
            // `Transfer-Encoding`, and hyper bounds only a declared length).
            None if undeclared_length => Either::Left(self.read_then_call(req).boxed()),
            Some(_) | None => Either::Right(layered::answer_of(&self.inner, req)),
        }
    }
}

impl<E: Endpoint> BodyLimitEndpoint<E> {
    /// The 413 for a declared `length` over the limit, after draining a body near it.
    async fn refuse(&self, mut req: Request, length: u64) -> poem::Result<Response> {
        if length <= (self.max_bytes + DRAIN_BYTES) as u64 {
            drain(req.take_body(), DRAIN_BYTES).await;
        }
        Ok(too_large(self.max_bytes))
    }

    /// The inner endpoint's answer once the body is read whole within the limit.
    async fn read_then_call(&self, mut req: Request) -> poem::Result<Response> {
        match read_up_to(req.take_body(), self.max_bytes).await {
            Ok(bytes) => req.set_body(bytes),
            Err(unread) => return Ok(unread.refusal(self.max_bytes)),
        }
        self.inner.call(req).await.map(IntoResponse::into_response)
    }
}

/// A whole request body of at most `limit` bytes, or why it was not read.
/// Gathers the chunks as hyper hands them over (a body that arrives in one chunk is not copied).
/// poem's `into_bytes_limit` reads through a zeroed 4 KiB array held in the reading future, which
/// every handler's future then carried and every boxing of it copied (issue 18: about a tenth
/// of a `ping`).
pub async fn read_limited(body: poem::Body, limit: usize) -> Result<bytes::Bytes, Unread> {
    let inner: http_body_util::combinators::BoxBody<bytes::Bytes, std::io::Error> = body.into();
    let limited = http_body_util::Limited::new(inner, limit);
    match http_body_util::BodyExt::collect(limited).await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(Unread::TooLarge),
        Err(error) => Err(error
            .downcast_ref::<std::io::Error>()
            .map_or(Unread::Broken, Unread::from)),
    }
}

/// Why a request body was not read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    TooLarge,
    /// It did not arrive in time: it paused for the idle timeout, or took longer than the body
    /// read timeout in all (the connection layer's deadlines, an `io::ErrorKind::TimedOut`).
    Paused,
    /// The bodies arriving at once hold the server's whole budget for them (the connection
    /// layer's, an `io::ErrorKind::OutOfMemory`): worth retrying shortly.
    Busy,
    /// The client broke it off, or it was not valid HTTP.
    Broken,
}

impl From<&std::io::Error> for Unread {
    fn from(error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::TimedOut => Self::Paused,
            std::io::ErrorKind::OutOfMemory => Self::Busy,
            _ => Self::Broken,
        }
    }
}

impl Unread {
    pub fn status(self) -> StatusCode {
        match self {
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Paused => StatusCode::REQUEST_TIMEOUT,
            Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Broken => StatusCode::BAD_REQUEST,
        }
    }

    /// `{ error: { code, message } }` with [`Unread::status`]; `max_bytes` is the limit a
    /// too-large body broke.
    pub fn refusal(self, max_bytes: usize) -> Response {
        let (code, message) = match self {
            Self::TooLarge => return too_large(max_bytes),
            Self::Paused => ("REQUEST_TIMEOUT", "the request body did not arrive in time"),
            Self::Busy => {
                return crate::busy::busy_json(
                    CpuBusy { retry_after_seconds: 1 },
                    "the server is receiving as many request bodies as it holds at once; retry shortly",
                );
            }
            Self::Broken => ("UNREADABLE_BODY", "the request body could not be read"),
        };
        (
            self.status(),
            Json(json!({ "error": { "code": code, "message": message } })),
        )
            .into_response()
    }
}

/// The whole body when it is at most `max_bytes`; past that, the rest is drained and dropped.
async fn read_up_to(body: poem::Body, max_bytes: usize) -> Result<Vec<u8>, Unread> {
    let mut stream = body.into_bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let refused = match chunk {
            Ok(chunk) if bytes.len() + chunk.len() <= max_bytes => {
                bytes.extend_from_slice(&chunk);
                continue;
            }
            Ok(_) => Unread::TooLarge,
            Err(error) => Unread::from(&error),
        };
        // A client still sending reads the refusal instead of a reset (a body refused for the
        // budget passes on uncharged); a body that broke off or timed out has nothing to drain.
        if matches!(refused, Unread::TooLarge | Unread::Busy) {
            drop(bytes);
            drain_stream(stream, DRAIN_BYTES).await;
        }
        return Err(refused);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(chunks: &[&'static [u8]]) -> poem::Body {
        let items: Vec<Result<bytes::Bytes, std::io::Error>> =
            chunks.iter().map(|c| Ok(bytes::Bytes::from_static(c))).collect();
        poem::Body::from_bytes_stream(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn a_body_of_exactly_the_limit_is_read_whole_across_its_chunks() {
        let read = read_limited(chunked(&[b"hello ", b"wor", b"ld"]), 11).await;
        assert_eq!(read.as_deref(), Ok(&b"hello world"[..]));
        assert_eq!(read_limited(poem::Body::empty(), 0).await.as_deref(), Ok(&b""[..]));
    }

    #[tokio::test]
    async fn a_body_one_byte_over_the_limit_is_refused() {
        assert_eq!(
            read_limited(chunked(&[b"hello ", b"world"]), 10).await,
            Err(Unread::TooLarge)
        );
        assert_eq!(
            read_limited(poem::Body::from_bytes(bytes::Bytes::from_static(b"12345")), 4).await,
            Err(Unread::TooLarge)
        );
    }

    fn breaking_off(kind: std::io::ErrorKind) -> poem::Body {
        let items: Vec<Result<bytes::Bytes, std::io::Error>> = vec![
            Ok(bytes::Bytes::from_static(b"{\"jsonrpc\"")),
            Err(std::io::Error::new(kind, "cut")),
        ];
        poem::Body::from_bytes_stream(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn a_body_that_breaks_off_is_refused() {
        let read = read_limited(breaking_off(std::io::ErrorKind::ConnectionReset), 1024).await;
        assert_eq!(read, Err(Unread::Broken));
    }

    #[tokio::test]
    async fn a_body_that_stopped_arriving_is_told_apart_from_one_that_broke() {
        let read = read_limited(breaking_off(std::io::ErrorKind::TimedOut), 1024).await;
        assert_eq!(read, Err(Unread::Paused));
        assert_eq!(Unread::Paused.refusal(1024).status(), StatusCode::REQUEST_TIMEOUT);
        let read = read_up_to(breaking_off(std::io::ErrorKind::TimedOut), 1024).await;
        assert_eq!(read, Err(Unread::Paused));
    }
}
