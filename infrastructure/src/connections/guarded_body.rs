//! A request body that stops arriving is cut off: while a handler waits on it, each pause between
//! two of its pieces may last at most the idle timeout (nginx's `client_body_timeout` is the same
//! rule). Without it a client that sends a head and part of a body holds its connection, its place
//! under the connection cap and, over HTTP/2, the bytes buffered for it, for as long as it keeps
//! the socket open: the idle timeout only asks hyper to close once the request is answered, and
//! the request is waiting on the client.
//!
//! The pause is timed from when the handler finds nothing to read, so a handler that reads late
//! is not charged for it. The reader sees an error of kind [`io::ErrorKind::TimedOut`]
//! (`408 Request Timeout` where the body is read; README "Configuration", `[connections]`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

pub struct PauseLimited<B> {
    inner: B,
    limit: Duration,
    /// Armed the first time the handler waits, then pushed back as each piece arrives.
    deadline: Option<Pin<Box<Sleep>>>,
    /// A piece arrived since the deadline was last set.
    arrived: bool,
    timed_out: bool,
}

impl<B> PauseLimited<B> {
    pub fn new(inner: B, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            deadline: None,
            arrived: false,
            timed_out: false,
        }
    }
}

impl<B> Body for PauseLimited<B>
where
    B: Body<Data = Bytes, Error = io::Error> + Unpin,
{
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if this.timed_out {
            return Poll::Ready(None);
        }
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if polled.is_ready() {
            this.arrived = true;
            return polled;
        }
        let limit = this.limit;
        let deadline = this.deadline.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if std::mem::take(&mut this.arrived) {
            deadline.as_mut().reset(Instant::now() + limit);
        }
        if deadline.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        this.timed_out = true;
        Poll::Ready(Some(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the request body paused for more than {} s", limit.as_secs()),
        ))))
    }

    fn is_end_stream(&self) -> bool {
        self.timed_out || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use futures_util::stream::BoxStream;
    use http_body_util::{BodyExt, StreamBody};
    use tokio::sync::mpsc;

    type Piece = Result<Frame<Bytes>, io::Error>;

    /// A body whose pieces the test sends when it likes.
    fn body(limit: Duration) -> (mpsc::Sender<Piece>, PauseLimited<StreamBody<BoxStream<'static, Piece>>>) {
        let (tx, rx) = mpsc::channel(4);
        let pieces = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|p| (p, rx)) });
        (tx, PauseLimited::new(StreamBody::new(pieces.boxed()), limit))
    }

    fn piece(text: &'static str) -> Piece {
        Ok(Frame::data(Bytes::from_static(text.as_bytes())))
    }

    const LIMIT: Duration = Duration::from_millis(400);
    /// Each test's bound: a body that hangs fails instead of hanging the run.
    const BOUND: Duration = Duration::from_secs(10);

    async fn bounded<T>(work: impl Future<Output = T>) -> T {
        tokio::time::timeout(BOUND, work)
            .await
            .expect("finished within the bound")
    }

    #[tokio::test]
    async fn a_body_that_stops_arriving_fails_once_the_pause_passes_the_limit() {
        let (tx, mut body) = body(LIMIT);
        tx.send(piece("a")).await.unwrap();
        let first = bounded(body.frame()).await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), "a");
        let started = std::time::Instant::now();
        let error = bounded(body.frame()).await.unwrap().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= LIMIT, "{:?}", started.elapsed());
        assert!(body.is_end_stream());
        assert!(bounded(body.frame()).await.is_none(), "nothing after the error");
        drop(tx);
    }

    #[tokio::test]
    async fn pieces_that_keep_coming_within_the_limit_are_read_to_the_end_however_long_it_takes() {
        let (tx, body) = body(LIMIT);
        tokio::spawn(async move {
            for _ in 0..6 {
                tokio::time::sleep(LIMIT / 2).await;
                tx.send(piece("ab")).await.unwrap();
            }
        });
        let whole = bounded(body.collect()).await.unwrap().to_bytes();
        assert_eq!(
            whole, "abababababab",
            "three times the limit in all, never one pause over it"
        );
    }

    #[tokio::test]
    async fn a_handler_that_reads_late_is_not_charged_for_the_wait() {
        let (tx, mut body) = body(LIMIT);
        tx.send(piece("a")).await.unwrap();
        // The handler is busy elsewhere for twice the limit before it asks for the body.
        tokio::time::sleep(LIMIT * 2).await;
        assert_eq!(bounded(body.frame()).await.unwrap().unwrap().into_data().unwrap(), "a");
        tokio::spawn(async move {
            tokio::time::sleep(LIMIT / 2).await;
            tx.send(piece("b")).await.unwrap();
        });
        let next = bounded(body.frame()).await.unwrap();
        assert_eq!(next.unwrap().into_data().unwrap(), "b", "timed from when it waits");
    }
}
