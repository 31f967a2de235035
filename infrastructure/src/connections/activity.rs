//! A connection's I/O, watched: when it last moved a byte, whether the client has sent any,
//! whether a whole request head has arrived yet, and since when the client has read nothing of
//! what the server is writing.
//! It also carries the connection's [`Slot`], so a live-channel socket keeps its place under the
//! cap after the HTTP upgrade, until its descriptor closes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::slots::Slot;

pub struct Activity {
    opened: Instant,
    /// Milliseconds after `opened` of the last byte moved either way.
    last_ms: AtomicU64,
    heard_from_client: AtomicBool,
    /// A request's head was read whole and handed to the service.
    head_read: AtomicBool,
    /// Milliseconds after `opened`, plus one, of the write that found the socket full with
    /// nothing written since; 0 while writes go through.
    writes_blocked_ms: AtomicU64,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            opened: Instant::now(),
            last_ms: AtomicU64::new(0),
            heard_from_client: AtomicBool::new(false),
            head_read: AtomicBool::new(false),
            writes_blocked_ms: AtomicU64::new(0),
        })
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn touch(&self) {
        self.last_ms.store(self.elapsed_ms(), Ordering::Release);
    }

    /// A write that went through, or found the socket full.
    fn note_write(&self, polled: &Poll<io::Result<usize>>) {
        match polled {
            Poll::Ready(Ok(n)) if *n > 0 => {
                self.touch();
                self.writes_blocked_ms.store(0, Ordering::Release);
            }
            Poll::Pending => {
                // The first write to find it full marks when the client stopped reading.
                let _ = self.writes_blocked_ms.compare_exchange(
                    0,
                    self.elapsed_ms() + 1,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
            Poll::Ready(_) => {}
        }
    }

    /// Since when the server's writes have waited on a client that reads nothing.
    pub fn writes_blocked_since(&self) -> Option<Instant> {
        match self.writes_blocked_ms.load(Ordering::Acquire) {
            0 => None,
            ms => Some(self.opened + Duration::from_millis(ms - 1)),
        }
    }

    pub fn opened(&self) -> Instant {
        self.opened
    }

    pub fn last(&self) -> Instant {
        self.opened + Duration::from_millis(self.last_ms.load(Ordering::Acquire))
    }

    pub fn heard_from_client(&self) -> bool {
        self.heard_from_client.load(Ordering::Acquire)
    }

    /// Called as each request reaches the service.
    pub fn note_head_read(&self) {
        self.head_read.store(true, Ordering::Release);
    }

    /// Whether a request has reached the service on this connection.
    pub fn any_head_read(&self) -> bool {
        self.head_read.load(Ordering::Acquire)
    }
}

pub struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    _slot: Slot,
}

impl<T> WatchedIo<T> {
    pub fn new(inner: T, activity: Arc<Activity>, slot: Slot) -> Self {
        Self {
            inner,
            activity,
            _slot: slot,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WatchedIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.heard_from_client.store(true, Ordering::Release);
            self.activity.touch();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WatchedIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.activity.note_write(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.activity.note_write(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
