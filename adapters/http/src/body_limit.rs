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
//!
//! The routes that take no credential ([`BodyLimit::except_under`]) read their bodies under small
//! limits of their own (16 or 64 KiB), each answering an oversized body in its own way: this
//! ceiling reads none of their bodies first, which would let a stranger's chunked body hold up to
//! the 4 MiB ceiling of their budget before the route's limit applied. A body of theirs of no
//! declared length is passed on as it arrives, under a cap of the largest of those limits (in
//! case a route there read without one); a pause or a refusal for the budget while the route
//! reads it is answered here, 408 or 503, as for every body of no declared length, unless the
//! route answered that very failure in its own shape ([`AnsweredUnread`]: the OAuth token
//! endpoint and registration, whose clients read OAuth errors).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
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
/// `POST /console/session` (a pair code, a key, or an email and a password) and
/// `POST /account/invite` (an invite's token, a name and a password).
pub const SIGN_IN_MAX_BODY_BYTES: usize = 16 * 1024;
/// The largest limit of a route that takes no credential (the OAuth forms and registration): no
/// body sent there is read past it, whatever the route.
pub const UNAUTHENTICATED_MAX_BODY_BYTES: usize = 64 * 1024;

/// The most of a refused body read (and dropped) so its sender sees the answer.
const DRAIN_BYTES: usize = 4 * 1024 * 1024;
/// The longest a refused body is read for.
const DRAIN_TIME: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy)]
pub struct BodyLimit {
    max_bytes: usize,
    own_limits: OwnLimits,
}

/// Routes that read their bodies under limits of their own, at most `cap`.
#[derive(Debug, Clone, Copy)]
struct OwnLimits {
    /// Path prefixes, each a whole number of segments.
    prefixes: &'static [&'static str],
    cap: usize,
}

impl OwnLimits {
    fn serve(&self, path: &str) -> bool {
        self.prefixes.iter().any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

impl BodyLimit {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            own_limits: OwnLimits { prefixes: &[], cap: 0 },
        }
    }

    /// The routes under `prefixes` read their bodies under limits of their own, none over `cap`:
    /// this ceiling reads none of their bodies first (module doc).
    pub fn except_under(self, prefixes: &'static [&'static str], cap: usize) -> Self {
        Self {
            own_limits: OwnLimits { prefixes, cap },
            ..self
        }
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
            own_limits: self.own_limits,
        }
    }
}

pub struct BodyLimitEndpoint<E> {
    inner: E,
    max_bytes: usize,
    own_limits: OwnLimits,
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
        if self.own_limits.serve(req.uri().path()) {
            // The route refuses a declared length over its limit before reading (`read_limited`,
            // or a `BodyLimit` of its own).
            return match declared {
                None if undeclared_length => Either::Left(self.stream_then_call(req).boxed()),
                Some(_) | None => Either::Right(layered::answer_of(&self.inner, req)),
            };
        }
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

    /// The inner endpoint's answer, the body passed on as it arrives under the own limits' cap;
    /// a pause or a refusal for the budget while it was read is answered as [`Unread::refusal`].
    async fn stream_then_call(&self, mut req: Request) -> poem::Result<Response> {
        let seen = Arc::new(OnceLock::new());
        let body = Watched {
            inner: Some(req.take_body().into()),
            read: 0,
            cap: self.own_limits.cap,
            seen: Arc::clone(&seen),
        };
        req.set_body(poem::Body::from(http_body_util::combinators::BoxBody::new(body)));
        let answer = self.inner.call(req).await.map(IntoResponse::into_response);
        match seen.get() {
            // Unless the route answered that failure itself, it may have taken it for a bad body.
            Some(&unread @ (Unread::Paused | Unread::Busy)) => match answer {
                Ok(own) if AnsweredUnread::of(&own) == Some(unread) => Ok(own),
                _ => Ok(unread.refusal(self.max_bytes)),
            },
            // Too large: the route's own answer (its limit is under the cap).
            Some(Unread::TooLarge | Unread::Broken) | None => answer,
        }
    }
}

type BoxedBody = http_body_util::combinators::BoxBody<bytes::Bytes, io::Error>;

/// A body passed on as it arrives, refused (an error of kind `FileTooLarge`, [`Unread::TooLarge`])
/// once more than `cap` bytes came; how it ended is noted in `seen`.
struct Watched {
    inner: Option<BoxedBody>,
    read: usize,
    cap: usize,
    seen: Arc<OnceLock<Unread>>,
}

impl http_body::Body for Watched {
    type Data = bytes::Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, io::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match ready!(Pin::new(inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                self.read = self.read.saturating_add(frame.data_ref().map_or(0, bytes::Bytes::len));
                if self.read <= self.cap {
                    return Poll::Ready(Some(Ok(frame)));
                }
                let _ = self.seen.set(Unread::TooLarge);
                self.inner = None;
                let message = format!("the request body is larger than {} bytes", self.cap);
                Poll::Ready(Some(Err(io::Error::new(io::ErrorKind::FileTooLarge, message))))
            }
            Some(Err(error)) => {
                let _ = self.seen.set(Unread::from(&error));
                Poll::Ready(Some(Err(error)))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.as_ref().map(http_body::Body::size_hint).unwrap_or_default()
    }
}

impl Drop for Watched {
    /// After a refusal for the budget the rest arrives uncharged: read and dropped (bounded), so
    /// that a client still sending reads the 503 instead of a reset.
    fn drop(&mut self) {
        if self.seen.get() != Some(&Unread::Busy) {
            return;
        }
        let (Some(inner), Ok(runtime)) = (self.inner.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        drop(runtime.spawn(drain(poem::Body::from(inner), DRAIN_BYTES)));
    }
}

/// A whole request body of at most `limit` bytes, or why it was not read; a declared length
/// over `limit` is refused before anything is read.
/// Gathers the chunks as hyper hands them over (a body that arrives in one chunk is not copied).
/// poem's `into_bytes_limit` reads through a zeroed 4 KiB array held in the reading future, which
/// every handler's future then carried and every boxing of it copied (issue 18: about a tenth
/// of a `ping`).
pub async fn read_limited(body: poem::Body, limit: usize) -> Result<bytes::Bytes, Unread> {
    let inner: BoxedBody = body.into();
    if http_body::Body::size_hint(&inner).lower() > limit as u64 {
        return Err(Unread::TooLarge);
    }
    let limited = http_body_util::Limited::new(inner, limit);
    match http_body_util::BodyExt::collect(limited).await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(Unread::TooLarge),
        Err(error) => Err(error
            .downcast_ref::<std::io::Error>()
            .map_or(Unread::Broken, Unread::from)),
    }
}

/// Marks a route's answer to a body it could not read whole: given under [`Unread::status`],
/// in the route's own shape, so a body of no declared length gets the answer a declared one
/// does instead of this layer's `{ error: { code, message } }` (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnsweredUnread(Unread);

impl AnsweredUnread {
    /// `answer`, marked as the route's answer to `unread`.
    pub fn mark(unread: Unread, mut answer: Response) -> Response {
        answer.extensions_mut().insert(Self(unread));
        answer
    }

    fn of(answer: &Response) -> Option<Unread> {
        answer.extensions().get::<Self>().map(|marked| marked.0)
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
            // The cap on the bodies of the routes with limits of their own (`Watched`).
            std::io::ErrorKind::FileTooLarge => Self::TooLarge,
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

    /// A body that declares `length` bytes and never sends one.
    struct Declared {
        length: u64,
    }

    impl http_body::Body for Declared {
        type Data = bytes::Bytes;
        type Error = io::Error;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, io::Error>>> {
            Poll::Pending
        }

        fn size_hint(&self) -> http_body::SizeHint {
            http_body::SizeHint::with_exact(self.length)
        }
    }

    #[test]
    fn a_declared_length_over_the_limit_is_refused_before_anything_arrives() {
        let declared = |length| poem::Body::from(BoxedBody::new(Declared { length }));
        assert_eq!(
            read_limited(declared(17), 16).now_or_never(),
            Some(Err(Unread::TooLarge))
        );
        assert_eq!(
            read_limited(declared(16), 16).now_or_never(),
            None,
            "within the limit it waits for the body"
        );
    }

    #[tokio::test]
    async fn a_body_past_the_cap_of_the_routes_with_limits_of_their_own_is_too_large_for_them() {
        let seen = Arc::new(OnceLock::new());
        let watched = |chunks, seen: &Arc<OnceLock<Unread>>| {
            let inner: BoxedBody = chunked(chunks).into();
            poem::Body::from(BoxedBody::new(Watched {
                inner: Some(inner),
                read: 0,
                cap: 8,
                seen: Arc::clone(seen),
            }))
        };
        // A route whose own limit is larger than the cap (none is) still refuses it as too large.
        let read = read_limited(watched(&[b"hello ", b"world"], &seen), 1024).await;
        assert_eq!(read, Err(Unread::TooLarge));
        assert_eq!(seen.get(), Some(&Unread::TooLarge));
        let within = Arc::new(OnceLock::new());
        let read = read_limited(watched(&[b"hello"], &within), 1024).await;
        assert_eq!(read.as_deref(), Ok(&b"hello"[..]));
        assert_eq!(within.get(), None);
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
