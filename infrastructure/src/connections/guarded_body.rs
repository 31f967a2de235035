//! Every request body is read under three rules, so a client cannot hold a connection, its place
//! under the cap or the server's memory by sending a body slowly:
//!
//! - each pause between two of its pieces, while a handler waits, may last at most the idle
//!   timeout (nginx's `client_body_timeout` is the same rule): the pause is timed from when the
//!   handler finds nothing to read, so a handler that reads late is not charged for it;
//! - the whole body must arrive within `[connections] body_read_timeout_seconds` of the handler's
//!   first read: a client that sends a byte just before each pause would otherwise keep a body
//!   (up to the route's limit, 200 of them per HTTP/2 connection) for as long as it liked;
//! - the bytes of all bodies still arriving count against one budget for the process
//!   ([`BodyBudget`], `body_bytes_in_flight_mib`), freed when each body is dropped; those of the
//!   routes that take no credential against one of their own (`unauthenticated_bodies.rs`).
//!
//! The reader sees an error of kind [`io::ErrorKind::TimedOut`] for either deadline (408
//! `REQUEST_TIMEOUT` where the body is read) and [`io::ErrorKind::OutOfMemory`] past the budget
//! (503 `SERVER_BUSY`; README "Connections"); after the latter the rest of the body passes
//! through uncharged, for a reader that drains it so its client reads the answer.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// The memory all request bodies still arriving may hold at once, in bytes.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    bytes: Arc<Semaphore>,
}

impl BodyBudget {
    pub fn new(bytes: usize) -> Self {
        Self {
            bytes: Arc::new(Semaphore::new(bytes.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// A budget of `mib` MiB (a setting's; its range is checked at load).
    pub fn of_mib(mib: u64) -> Self {
        Self::new(usize::try_from(mib).unwrap_or(usize::MAX).saturating_mul(1 << 20))
    }

    /// Adds `bytes` to what `held` holds; false when the budget has not that much left.
    fn charge(&self, bytes: usize, held: &mut Option<OwnedSemaphorePermit>) -> bool {
        let Ok(count) = u32::try_from(bytes) else { return false };
        if count == 0 {
            return true;
        }
        match self.bytes.clone().try_acquire_many_owned(count) {
            Ok(permit) => {
                match held {
                    Some(held) => held.merge(permit),
                    None => *held = Some(permit),
                }
                true
            }
            Err(_) => false,
        }
    }
}

/// The rules a body is read under (the connection's `[connections]` settings).
#[derive(Debug, Clone)]
pub struct BodyRules {
    /// The longest pause while a handler waits (the idle timeout).
    pub pause: Duration,
    /// The longest the whole body may take from the handler's first read.
    pub whole: Duration,
    pub budget: BodyBudget,
}

pub struct GuardedBody<B> {
    inner: B,
    rules: BodyRules,
    /// Armed the first time the handler waits, then pushed back as each piece arrives.
    pause_deadline: Option<Pin<Box<Sleep>>>,
    /// Armed at the handler's first read.
    whole_deadline: Option<Pin<Box<Sleep>>>,
    /// A piece arrived since the pause deadline was last set.
    arrived: bool,
    /// This body's share of the budget, given back when it is dropped.
    held: Option<OwnedSemaphorePermit>,
    /// The error this body ended with. After a refusal for the budget the rest passes through
    /// uncharged, so the reader can drain (and drop) it and the client read its answer; after a
    /// deadline nothing more is read.
    failed: Option<io::ErrorKind>,
}

impl<B> GuardedBody<B> {
    pub fn new(inner: B, rules: BodyRules) -> Self {
        Self {
            inner,
            rules,
            pause_deadline: None,
            whole_deadline: None,
            arrived: false,
            held: None,
            failed: None,
        }
    }

    fn fail(&mut self, kind: io::ErrorKind, message: String) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.failed = Some(kind);
        Poll::Ready(Some(Err(io::Error::new(kind, message))))
    }

    fn too_slow(&mut self) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let message = format!(
            "the request body did not arrive whole within {} s",
            self.rules.whole.as_secs()
        );
        self.fail(io::ErrorKind::TimedOut, message)
    }
}

impl<B> Body for GuardedBody<B>
where
    B: Body<Data = Bytes, Error = io::Error> + Unpin,
{
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        match this.failed {
            None => {}
            Some(io::ErrorKind::OutOfMemory) => return Pin::new(&mut this.inner).poll_frame(cx),
            Some(_) => return Poll::Ready(None),
        }
        let whole = this.rules.whole;
        let whole_deadline = this
            .whole_deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(whole)));
        let late = whole_deadline.deadline() <= Instant::now();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let bytes = frame.data_ref().map_or(0, Bytes::len);
                if !this.rules.budget.charge(bytes, &mut this.held) {
                    return this.fail(
                        io::ErrorKind::OutOfMemory,
                        "the server is receiving as many request bodies as it holds at once".to_owned(),
                    );
                }
                if late && !this.inner.is_end_stream() {
                    return this.too_slow();
                }
                this.arrived = true;
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(other) => {
                this.arrived = true;
                return Poll::Ready(other);
            }
            Poll::Pending => {}
        }
        if whole_deadline.as_mut().poll(cx).is_ready() {
            return this.too_slow();
        }
        let pause = this.rules.pause;
        let deadline = this
            .pause_deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(pause)));
        if std::mem::take(&mut this.arrived) {
            deadline.as_mut().reset(Instant::now() + pause);
        }
        if deadline.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let message = format!("the request body paused for more than {} s", pause.as_secs());
        this.fail(io::ErrorKind::TimedOut, message)
    }

    fn is_end_stream(&self) -> bool {
        match self.failed {
            None | Some(io::ErrorKind::OutOfMemory) => self.inner.is_end_stream(),
            Some(_) => true,
        }
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

    type TestBody = GuardedBody<StreamBody<BoxStream<'static, Piece>>>;

    /// A body whose pieces the test sends when it likes, read under `rules`.
    fn guarded(rules: BodyRules) -> (mpsc::Sender<Piece>, TestBody) {
        let (tx, rx) = mpsc::channel(4);
        let pieces = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|p| (p, rx)) });
        (tx, GuardedBody::new(StreamBody::new(pieces.boxed()), rules))
    }

    /// A body with pauses of at most `limit`, ample time in all and an ample budget.
    fn body(limit: Duration) -> (mpsc::Sender<Piece>, TestBody) {
        guarded(BodyRules {
            pause: limit,
            whole: BOUND,
            budget: BodyBudget::new(1 << 20),
        })
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
    async fn pieces_that_keep_coming_within_the_limit_are_read_to_the_end_within_the_whole_deadline() {
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

    #[tokio::test]
    async fn a_body_that_never_pauses_long_but_takes_too_long_in_all_fails() {
        let whole = LIMIT * 2;
        let (tx, body) = guarded(BodyRules {
            pause: LIMIT,
            whole,
            budget: BodyBudget::new(1 << 20),
        });
        tokio::spawn(async move {
            while tx.send(piece("a")).await.is_ok() {
                tokio::time::sleep(LIMIT / 4).await;
            }
        });
        let started = std::time::Instant::now();
        let error = bounded(body.collect()).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(error.to_string().contains("did not arrive whole"), "{error}");
        assert!(started.elapsed() >= whole, "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn bodies_arriving_at_once_share_one_budget_given_back_when_each_is_dropped() {
        let budget = BodyBudget::new(5);
        let rules = BodyRules {
            pause: LIMIT,
            whole: BOUND,
            budget: budget.clone(),
        };
        let (first_tx, mut first) = guarded(rules.clone());
        first_tx.send(piece("abc")).await.unwrap();
        assert_eq!(
            bounded(first.frame()).await.unwrap().unwrap().into_data().unwrap(),
            "abc"
        );
        let (second_tx, mut second) = guarded(rules.clone());
        second_tx.send(piece("ab")).await.unwrap();
        second_tx.send(piece("c")).await.unwrap();
        assert_eq!(
            bounded(second.frame()).await.unwrap().unwrap().into_data().unwrap(),
            "ab"
        );
        let refused = bounded(second.frame()).await.unwrap().unwrap_err();
        assert_eq!(
            refused.kind(),
            io::ErrorKind::OutOfMemory,
            "3 + 2 of 5 bytes held, 1 more asked"
        );
        second_tx.send(piece("defgh")).await.unwrap();
        let drained = bounded(second.frame()).await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(drained, "defgh", "the rest passes through uncharged, to be drained");
        drop((first, second));
        let (third_tx, third) = guarded(rules);
        third_tx.send(piece("abcde")).await.unwrap();
        drop(third_tx);
        assert_eq!(
            bounded(third.collect()).await.unwrap().to_bytes(),
            "abcde",
            "all 5 given back"
        );
    }
}
