//! Writing to a live socket within deadlines: a peer that stops reading fills the socket's
//! buffers, and its connection (and whatever it was sent) would otherwise be held for good.
//! A message is written in fragments ([`text_frames`]); the deadline covers all that was decided
//! at once (a subscribe's replay is up to 16 MiB), so a peer that takes each fragment just
//! before a per-frame limit cannot hold the socket for hours.

use std::task::Poll;
use std::time::Duration;

use futures_util::SinkExt;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use super::upgrade::{FRAGMENT_BYTES, text_frames};

/// Longest one small write may wait (a ping, a close frame, a short message).
pub(super) const WRITE_LIMIT: Duration = Duration::from_secs(30);

/// How long a write of some bytes may take: `base`, plus a second per `bytes_per_second`; and
/// each frame of it at most `base`.
#[derive(Debug, Clone, Copy)]
struct WriteDeadline {
    base: Duration,
    bytes_per_second: u64,
}

/// A live socket's: the slowest reader waited for reads 64 KiB a second.
const LIVE_SOCKET: WriteDeadline = WriteDeadline {
    base: WRITE_LIMIT,
    bytes_per_second: 64 * 1024,
};

impl WriteDeadline {
    fn for_bytes(self, bytes: usize) -> Duration {
        self.base + Duration::from_secs_f64(bytes as f64 / self.bytes_per_second as f64)
    }
}

/// How long a live socket may take to write `bytes` decided at once (`replay_pieces` spreads a
/// subscribe's replay over several writes under one such deadline).
pub(super) fn live_write_deadline(bytes: usize) -> Duration {
    LIVE_SOCKET.for_bytes(bytes)
}

/// Writes `texts` in order, each in fragments when long: each write within [`WRITE_LIMIT`] (a
/// peer that stopped reading) and all within the live socket's deadline for their length (a
/// peer reading too slowly); false once the socket is gone or either deadline passed. A text is
/// a `String` made for this socket or a frame shared by every socket that hears an event.
pub(super) async fn send_all<T>(sink: &mut (impl SinkExt<Message> + Unpin), texts: Vec<T>) -> bool
where
    T: Into<Utf8Bytes> + AsRef<str>,
{
    send_within(sink, texts, LIVE_SOCKET).await
}

async fn send_within<T>(sink: &mut (impl SinkExt<Message> + Unpin), mut texts: Vec<T>, deadline: WriteDeadline) -> bool
where
    T: Into<Utf8Bytes> + AsRef<str>,
{
    // The common case (one event heard by many sockets): one frame, whose write's own limit is
    // the tighter of the two.
    if texts.len() == 1 && texts[0].as_ref().len() <= FRAGMENT_BYTES {
        let text = texts.pop().map(Into::into).unwrap_or_default();
        return write_within(sink, Message::Text(text), deadline.base).await;
    }
    let bytes = texts.iter().map(|text| text.as_ref().len()).sum();
    let writes = async {
        for text in texts {
            for frame in text_frames(text.into()) {
                tokio::time::timeout(deadline.base, sink.send(frame)).await.ok()?.ok()?;
            }
        }
        Some(())
    };
    matches!(
        tokio::time::timeout(deadline.for_bytes(bytes), writes).await,
        Ok(Some(()))
    )
}

/// [`send_all`] of one message.
pub(super) async fn send(sink: &mut (impl SinkExt<Message> + Unpin), text: String) -> bool {
    send_all(sink, vec![text]).await
}

/// Writes one message within [`WRITE_LIMIT`]; false once the socket is gone or stopped reading.
pub(super) async fn write(sink: &mut (impl SinkExt<Message> + Unpin), message: Message) -> bool {
    write_within(sink, message, WRITE_LIMIT).await
}

async fn write_within(sink: &mut (impl SinkExt<Message> + Unpin), message: Message, limit: Duration) -> bool {
    let mut send = std::pin::pin!(sink.send(message));
    // Tried once before the deadline is set: a socket with room takes the frame at once, and
    // only a write that waits pays for a deadline (a clock read and a timer entry, per socket,
    // for every event of a fan-out).
    if let Poll::Ready(sent) = futures_util::poll!(send.as_mut()) {
        return sent.is_ok();
    }
    matches!(tokio::time::timeout(limit, send).await, Ok(Ok(())))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use futures_util::{future, sink};

    use super::*;

    /// A deadline scaled down for a test: 200 ms, plus a second per 64 KiB.
    const SCALED: WriteDeadline = WriteDeadline {
        base: Duration::from_millis(200),
        bytes_per_second: 64 * 1024,
    };

    /// A peer that takes one frame every `every`.
    fn slow_reader(every: Duration, taken: Arc<Mutex<usize>>) -> impl SinkExt<Message> + Unpin {
        Box::pin(sink::unfold((), move |(), _frame: Message| {
            let taken = taken.clone();
            async move {
                tokio::time::sleep(every).await;
                *taken.lock().unwrap() += 1;
                Ok::<_, std::convert::Infallible>(())
            }
        }))
    }

    #[tokio::test]
    async fn a_reader_that_takes_each_fragment_within_the_base_is_cut_off_at_the_deadline_of_the_whole() {
        let taken = Arc::new(Mutex::new(0));
        // Each 2 KiB fragment taken after 100 ms (within the 200 ms base): 20 KiB a second.
        let mut sink = slow_reader(Duration::from_millis(100), taken.clone());
        let replay = "r".repeat(64 * 1024);
        let fragments = text_frames(replay.clone().into()).len();
        let started = Instant::now();
        assert!(!send_within(&mut sink, vec![replay], SCALED).await, "refused");
        let elapsed = started.elapsed();
        assert!(elapsed >= SCALED.for_bytes(64 * 1024), "{elapsed:?}");
        assert!(
            elapsed < Duration::from_secs(3),
            "cut off at the deadline, not at the end: {elapsed:?}"
        );
        assert!(*taken.lock().unwrap() < fragments, "cut off before the end");
        assert_eq!(LIVE_SOCKET.for_bytes(1 << 20), Duration::from_secs(46));
    }

    #[tokio::test]
    async fn a_reader_that_stops_is_cut_off_after_the_base_whatever_the_length() {
        let taken = Arc::new(Mutex::new(0));
        let mut sink = slow_reader(Duration::from_secs(3600), taken.clone());
        let started = Instant::now();
        assert!(!send_within(&mut sink, vec!["s".repeat(64 * 1024)], SCALED).await);
        let elapsed = started.elapsed();
        assert!(
            elapsed >= SCALED.base && elapsed < SCALED.for_bytes(64 * 1024),
            "{elapsed:?}"
        );
        assert_eq!(*taken.lock().unwrap(), 0);
    }

    #[tokio::test]
    async fn one_short_frame_to_a_reader_that_stops_is_cut_off_after_the_base() {
        let taken = Arc::new(Mutex::new(0));
        let mut sink = slow_reader(Duration::from_secs(3600), taken.clone());
        let started = Instant::now();
        let shared = Utf8Bytes::from("{\"type\":\"data\"}");
        assert!(!send_within(&mut sink, vec![shared], SCALED).await);
        let elapsed = started.elapsed();
        assert!(
            elapsed >= SCALED.base && elapsed < Duration::from_secs(2),
            "{elapsed:?}"
        );
        assert_eq!(*taken.lock().unwrap(), 0);
    }

    #[tokio::test]
    async fn a_reader_faster_than_the_slowest_rate_gets_everything() {
        let taken = Arc::new(Mutex::new(0));
        let mut sink = slow_reader(Duration::from_millis(1), taken.clone());
        let texts = vec!["a".repeat(64 * 1024), "b".repeat(10)];
        let fragments: usize = texts.iter().map(|t| text_frames(t.clone().into()).len()).sum();
        assert!(send_within(&mut sink, texts, SCALED).await);
        assert_eq!(*taken.lock().unwrap(), fragments);
        let mut gone = Box::pin(sink::unfold((), |(), _frame: Message| {
            future::ready(Err::<(), _>("closed"))
        }));
        assert!(!send(&mut gone, "x".into()).await, "a closed socket");
    }
}
