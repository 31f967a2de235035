//! A request body that is read to its end even when the handler answers without it.
//!
//! When a handler drops a body it has not read (a 401 before the JSON-RPC body is parsed, a 415,
//! a 404), hyper reads what is already buffered and otherwise closes the connection after the
//! response, without a `Connection: close` in it. A client that wrote its head and its body in
//! two writes (httpx, the official Python SDK's client, does) has pooled that connection by then
//! and sends its next request into a closed socket: `ReadError`/`ECONNRESET` on its side, and
//! the OAuth discovery after a 401 does exactly that. So a body dropped before its end is handed
//! to a task that reads and discards the rest (bounded in bytes and time, after which hyper
//! closes as before), and the connection stays usable.
//!
//! Only a body the handler never began to read is drained, and only when it can end within the
//! bound: a declared rest over [`DRAIN_BYTES`] closes at once as before, and a body the handler
//! read part of (the body limit's 413, which drains what it refuses itself) is not read twice.
//! HTTP/2 needs none of this (a dropped body resets its stream, which tells the client to stop
//! sending), nor does `Expect: 100-continue` (hyper then never asks for the body).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;

/// What is drained of an unread body before giving up and letting hyper close the connection.
const DRAIN_BYTES: u64 = 1024 * 1024;
const DRAIN_TIME: Duration = Duration::from_secs(5);

pub struct DrainedBody {
    inner: Option<Incoming>,
    ended: bool,
    /// Whether the body is drained when dropped unread (an HTTP/1 request without `Expect`).
    drains: bool,
    /// Whether the handler began to read it.
    touched: bool,
}

impl DrainedBody {
    pub fn new(inner: Incoming, drains: bool) -> Self {
        let ended = inner.is_end_stream();
        Self {
            inner: Some(inner),
            ended,
            drains,
            touched: false,
        }
    }
}

impl Body for DrainedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.touched = true;
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.ended = true;
        }
        polled.map(|frame| frame.map(|frame| frame.map_err(io::Error::other)))
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.as_ref().map(Body::size_hint).unwrap_or_default()
    }
}

impl Drop for DrainedBody {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        let beyond_the_bound = inner.size_hint().lower() > DRAIN_BYTES;
        if !self.drains || self.touched || self.ended || inner.is_end_stream() || beyond_the_bound {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let _ = tokio::time::timeout(DRAIN_TIME, discard(inner, DRAIN_BYTES)).await;
        });
    }
}

/// Reads `body` to its end, or until more than `limit` bytes came.
async fn discard(mut body: Incoming, limit: u64) {
    let mut read = 0u64;
    while let Some(Ok(frame)) = body.frame().await {
        if let Some(data) = frame.data_ref() {
            read += data.len() as u64;
            if read > limit {
                return;
            }
        }
    }
}
