//! A subscribe's replay, read and sent a piece at a time: gestures after `sinceSequence`, then
//! envelopes after `fromSeq`, then the envelopes published while the socket subscribed (the
//! catch-up). Each piece is the head of what is left of the replay's window (the rows the store
//! would replay whole, in order, while their stored JSON stays within [`PIECE_BYTES`], the first
//! always); the next piece reads on from the last item sent. The client gets the frames a
//! replay read at once would give, in the same order, but a socket holds one piece's frames at
//! a time and the server only [`REPLAY_BYTES_IN_FLIGHT`](super::replay_budget) of pieces being
//! parsed, however many sockets subscribe.
//!
//! The `ack` tells the gap of each replay's first read; the pieces then resume just before the
//! first item that read kept, so the gap is told once. A later piece that finds items left out
//! (newer ones pushed the older out of the window while the socket was sent the first) is
//! preceded by a `system replay_gap` naming that replay, as the live tail reports one.
//!
//! The ack and every piece after it are written within the live socket's deadline for their
//! bytes together (`socket_writes`), counted from the ack: waiting for the budget and reading
//! count against it, so a socket cannot wait for ever. Before the ack, the reads that tell its
//! gaps ([`start`]) wait for the budget until the subscribe's own deadline, then answer busy.

use std::future::Future;

use futures_util::SinkExt;
use svc_application::services::agent::{AgentError, Replay};
use tokio::time::{Instant, timeout_at};
use tokio_tungstenite::tungstenite::Message;

use super::frames::{self, ReplayGaps};
use super::replay_budget::ReplayBudget;
use super::socket_writes::{live_write_deadline, send_all};
use super::subscribe::Subscribed;
use crate::route_states::LiveRoutes;

/// Stored bytes one read of a replay carries (the first row always): the polling fallback's
/// answer budget, so a piece's frames are about a megabyte.
pub(crate) const PIECE_BYTES: usize = 1024 * 1024;

/// The gestures' part of a `replay_gap` told after the ack.
const ACTIONS: ReplayGaps = ReplayGaps {
    actions: true,
    streams: false,
};

/// One read of a replay, rendered: its frames, and where it leaves the replay.
pub(super) struct Piece {
    pub frames: Vec<String>,
    /// Position (`sequence` or `seq`) of the last item read.
    pub last: Option<i64>,
    /// Items before the first were left out of the window.
    pub gap: bool,
    /// Items after the last wait for the next read.
    pub cut: bool,
}

impl Piece {
    /// Renders `replay`'s items; the items themselves (parsed JSON) are dropped here.
    pub fn of<T>(replay: Replay<T>, position: fn(&T) -> i64, frame: fn(&T) -> String) -> Self {
        Self {
            frames: replay.items.iter().map(frame).collect(),
            last: replay.items.last().map(position),
            gap: replay.gap,
            cut: replay.cut,
        }
    }

    fn bytes(&self) -> usize {
        self.frames.iter().map(String::len).sum()
    }
}

/// Where a replay's pieces begin after its first read told the ack whether it left items out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ReplayStart {
    pub gap: bool,
    /// The cursor of the first piece: the client's, or just before the first item kept.
    pub after: i64,
}

impl ReplayStart {
    fn of<T>(after: i64, replay: &Replay<T>, position: fn(&T) -> i64) -> Self {
        let after = match replay.items.first() {
            Some(first) if replay.gap => position(first) - 1,
            _ => after,
        };
        Self { gap: replay.gap, after }
    }
}

/// How the read of a replay's first item before the `ack` ended, when it did not tell the gap.
#[derive(Debug)]
pub(super) enum StartEnd {
    /// No share of the replay budget freed before the subscribe's deadline: the subscribe is
    /// answered with this `error SERVER_BUSY` frame, and the socket stays as it was.
    Busy(String),
    /// The store failed.
    Failed(AgentError),
}

/// Seconds a subscribe refused for the replay budget is told to wait before it is sent again.
const BUSY_RETRY_AFTER_SECONDS: u64 = 1;

/// The `error SERVER_BUSY` frame of a subscribe whose replay found no share of the budget free.
fn busy_frame() -> String {
    frames::frame(
        "error",
        serde_json::json!({
            "code": "SERVER_BUSY",
            "message": "the server is replaying to many sockets; subscribe again shortly",
            "retryAfterSeconds": BUSY_RETRY_AFTER_SECONDS,
        }),
    )
}

/// Whether the replay after `after` leaves items out, read (by `read`) from the window's first
/// item alone under a share of `budget`; its frames come with the pieces, after the ack. The
/// socket reads nothing else meanwhile, so the share is waited for only until `by`.
pub(super) async fn start<T>(
    budget: &ReplayBudget,
    by: Instant,
    after: i64,
    read: impl Future<Output = Result<Replay<T>, AgentError>>,
    position: fn(&T) -> i64,
) -> Result<ReplayStart, StartEnd> {
    let Ok(_share) = timeout_at(by, budget.take(PIECE_BYTES)).await else {
        return Err(StartEnd::Busy(busy_frame()));
    };
    let first = read.await.map_err(StartEnd::Failed)?;
    Ok(ReplayStart::of(after, &first, position))
}

/// [`start`] of the gesture replay after `after`.
pub(super) async fn start_actions(
    state: &LiveRoutes,
    by: Instant,
    session_id: &str,
    after: i64,
) -> Result<ReplayStart, StartEnd> {
    let read = state.agent.replay_actions_head(session_id, after, 0);
    start(&state.replay_budget, by, after, read, |e| e.sequence).await
}

/// [`start`] of the envelope replay after `after`.
pub(super) async fn start_streams(
    state: &LiveRoutes,
    by: Instant,
    session_id: &str,
    after: i64,
) -> Result<ReplayStart, StartEnd> {
    let read = state.agent.replay_streams_head(session_id, after, 0);
    start(&state.replay_budget, by, after, read, |e| e.seq).await
}

/// Bytes written to a socket since the ack, and when the ack went: the deadline of what was
/// decided at once (the ack and its replay) grows with each piece.
pub(super) struct ReplayClock {
    started: Instant,
    bytes: usize,
}

impl ReplayClock {
    /// A clock started now, for the ack and the frames that lead the replay (`leading`).
    pub fn start(leading: &[String]) -> Self {
        Self {
            started: Instant::now(),
            bytes: leading.iter().map(String::len).sum(),
        }
    }

    /// When what was written so far and `more` bytes must have been written.
    fn by(&self, more: usize) -> Instant {
        self.started + live_write_deadline(self.bytes.saturating_add(more))
    }
}

/// The replay a bound socket is sent after its `ack`.
pub(super) struct PendingReplay {
    pub session_id: String,
    /// Gestures after this sequence (`sinceSequence`, moved by [`ReplayStart`]).
    pub actions_after: Option<i64>,
    /// Envelopes after this `seq` (`fromSeq`, moved by [`ReplayStart`]).
    pub streams_after: Option<i64>,
    /// The session's last `seq` at subscribe: envelopes after it (and after what the replay
    /// sent) were published while the socket subscribed.
    pub catch_up_after: i64,
    pub clock: ReplayClock,
}

/// How sending a replay ended.
#[derive(Debug)]
pub(super) enum ReplayEnd {
    /// Every piece was sent.
    Sent,
    /// The socket is gone, or did not take the frames (or the budget was not free) in time.
    Gone,
    /// The store failed; the socket is fine.
    Failed(AgentError),
}

/// Sends `replay` to `sink`: gestures, then envelopes, then the catch-up. On [`ReplayEnd::Sent`]
/// `subscribed.stream_cursor` is the last envelope sent (or the session's at subscribe).
pub(super) async fn send_replay(
    state: &LiveRoutes,
    sink: &mut (impl SinkExt<Message> + Unpin),
    mut replay: PendingReplay,
    subscribed: &mut Subscribed,
) -> ReplayEnd {
    let session_id = replay.session_id.as_str();
    let budget = &state.replay_budget;
    let clock = &mut replay.clock;
    if let Some(after) = replay.actions_after {
        let read = |after| async move {
            let head = state.agent.replay_actions_head(session_id, after, PIECE_BYTES).await?;
            Ok(Piece::of(head, |e| e.sequence, frames::render_event))
        };
        if let Err(end) = send_pieces(budget, clock, sink, after, ACTIONS, read).await {
            return end;
        }
    }
    let streams = |after| async move {
        let head = state.agent.replay_streams_head(session_id, after, PIECE_BYTES).await?;
        Ok(Piece::of(head, |e| e.seq, frames::data))
    };
    let mut cursor = replay.catch_up_after;
    if let Some(after) = replay.streams_after {
        match send_pieces(budget, clock, sink, after, ReplayGaps::STREAMS, streams).await {
            Ok(last) => cursor = cursor.max(last.unwrap_or(i64::MIN)),
            Err(end) => return end,
        }
    }
    // The socket listened before the first piece was read: what was published since the
    // session's last `seq` at subscribe and the replay did not carry is in the store.
    match send_pieces(budget, clock, sink, cursor, ReplayGaps::STREAMS, streams).await {
        Ok(last) => {
            subscribed.stream_cursor = last.unwrap_or(cursor);
            ReplayEnd::Sent
        }
        Err(end) => end,
    }
}

/// Reads (with `read`, from `after` on) and sends one replay's pieces until the store says
/// nothing is left; each read holds [`PIECE_BYTES`] of `budget` until its frames are rendered.
/// A piece that left items out is preceded by a `replay_gap` naming `lost`. The position of the
/// last item sent, if any.
pub(super) async fn send_pieces<F>(
    budget: &ReplayBudget,
    clock: &mut ReplayClock,
    sink: &mut (impl SinkExt<Message> + Unpin),
    mut after: i64,
    lost: ReplayGaps,
    mut read: impl FnMut(i64) -> F,
) -> Result<Option<i64>, ReplayEnd>
where
    F: Future<Output = Result<Piece, AgentError>>,
{
    let mut last_sent = None;
    loop {
        let piece = async {
            let _share = budget.take(PIECE_BYTES).await;
            read(after).await
        };
        let piece = match timeout_at(clock.by(PIECE_BYTES), piece).await {
            Ok(Ok(piece)) => piece,
            Ok(Err(failed)) => return Err(ReplayEnd::Failed(failed)),
            Err(_) => return Err(ReplayEnd::Gone),
        };
        let mut out = Vec::with_capacity(piece.frames.len() + 1);
        if piece.gap {
            out.push(frames::frame("system", frames::replay_gap(lost)));
        }
        let bytes = piece.bytes() + out.iter().map(String::len).sum::<usize>();
        out.extend(piece.frames);
        if !out.is_empty() && !matches!(timeout_at(clock.by(bytes), send_all(sink, out)).await, Ok(true)) {
            return Err(ReplayEnd::Gone);
        }
        clock.bytes += bytes;
        // A read that carried nothing more ends the replay, whatever it says.
        let Some(last) = piece.last else { return Ok(last_sent) };
        (after, last_sent) = (last, Some(last));
        if !piece.cut {
            return Ok(last_sent);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::pin::pin;

    use futures_util::{FutureExt, poll};
    use serde_json::Value;
    use tokio::sync::Notify;

    use super::*;
    use crate::live::replay_budget::REPLAY_BYTES_IN_FLIGHT;

    /// A piece of the items `after + 1 ..= last` of a stored replay, one frame each.
    fn piece(after: i64, last: i64, gap: bool, cut: bool) -> Piece {
        Piece {
            frames: (after + 1..=last)
                .map(|n| frames::frame("data", serde_json::json!({ "seq": n })))
                .collect(),
            last: (last > after).then_some(last),
            gap,
            cut,
        }
    }

    /// The (type, seq or `replay_gap`'s lost) of each frame written to `sink`.
    fn written(sink: &[Message]) -> Vec<(String, Value)> {
        sink.iter()
            .map(|m| {
                let frame: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
                let payload = &frame["payload"];
                let what = if payload["event"] == "replay_gap" {
                    payload["lost"].clone()
                } else {
                    payload["seq"].clone()
                };
                (frame["type"].as_str().unwrap().to_owned(), what)
            })
            .collect()
    }

    #[tokio::test]
    async fn pieces_go_in_order_each_once_from_where_the_last_stopped_and_a_later_gap_is_told_before_its_piece() {
        let budget = ReplayBudget::default();
        let mut clock = ReplayClock::start(&[]);
        let mut sink: Vec<Message> = Vec::new();
        let asked = RefCell::new(vec![]);
        // The store: 1-3 (more to come), 4-6 (more), then a window that lost 7-8: 9-10, the end.
        let read = |after: i64| {
            asked.borrow_mut().push(after);
            let piece = match after {
                0 => piece(0, 3, false, true),
                3 => piece(3, 6, false, true),
                6 => piece(8, 10, true, false),
                other => panic!("read from {other}"),
            };
            std::future::ready(Ok(piece))
        };
        let last = send_pieces(&budget, &mut clock, &mut sink, 0, ReplayGaps::STREAMS, read).await;
        assert_eq!(last.unwrap(), Some(10));
        assert_eq!(*asked.borrow(), [0, 3, 6], "each read from the last item sent");
        let data = |n: i64| ("data".to_owned(), Value::from(n));
        let mut expected: Vec<_> = (1..=6).map(data).collect();
        expected.push(("system".into(), serde_json::json!(["streams"])));
        expected.extend((9..=10).map(data));
        assert_eq!(written(&sink), expected);
        assert_eq!(clock.bytes, sink.iter().map(|m| m.len()).sum::<usize>());

        // Nothing after the cursor: one read, nothing written, no position.
        let mut sink: Vec<Message> = Vec::new();
        let empty = |after| std::future::ready(Ok(piece(after, after, false, false)));
        let last = send_pieces(&budget, &mut clock, &mut sink, 10, ReplayGaps::STREAMS, empty).await;
        assert_eq!((last.unwrap(), sink.len()), (None, 0));
    }

    #[tokio::test]
    async fn a_subscribe_finding_the_whole_budget_taken_is_answered_busy_by_its_deadline() {
        let budget = ReplayBudget::default();
        let held = budget.take(REPLAY_BYTES_IN_FLIGHT).await;
        let read = std::future::ready(Ok(Replay::<i64> {
            items: vec![1],
            gap: false,
            cut: false,
        }));
        let by = Instant::now() + std::time::Duration::from_millis(50);
        // Far longer than the deadline: a subscribe still waiting then would hang for good.
        let answered =
            tokio::time::timeout(std::time::Duration::from_secs(10), start(&budget, by, 0, read, |n| *n)).await;
        let Ok(Err(StartEnd::Busy(frame))) = answered else {
            panic!("the subscribe is answered busy, not {answered:?}");
        };
        let frame: Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(
            frame,
            serde_json::json!({ "type": "error", "payload": {
                "code": "SERVER_BUSY",
                "message": "the server is replaying to many sockets; subscribe again shortly",
                "retryAfterSeconds": 1,
            } })
        );

        // With a share free, the same read tells the gap at once.
        drop(held);
        let read = std::future::ready(Ok(Replay::<i64> {
            items: vec![5],
            gap: true,
            cut: true,
        }));
        let started = start(&budget, Instant::now(), 0, read, |n| *n).await.unwrap();
        assert_eq!(started, ReplayStart { gap: true, after: 4 });
    }

    #[tokio::test]
    async fn a_replay_past_the_servers_budget_waits_for_a_share_before_it_reads() {
        // Room for two pieces being read at once.
        let budget = ReplayBudget::of_bytes(2 * PIECE_BYTES);
        let reading = Cell::new(0);
        let store = Notify::new();
        let read = |after: i64| {
            reading.set(reading.get() + 1);
            let store = &store;
            async move {
                store.notified().await;
                Ok(piece(after, after + 1, false, false))
            }
        };
        let (mut clocks, mut sinks): (Vec<_>, Vec<Vec<Message>>) =
            (0..3).map(|_| (ReplayClock::start(&[]), Vec::new())).unzip();
        let [c1, c2, c3] = &mut clocks[..] else { unreachable!() };
        let [s1, s2, s3] = &mut sinks[..] else { unreachable!() };
        let mut first = pin!(send_pieces(&budget, c1, s1, 0, ReplayGaps::STREAMS, read));
        let mut second = pin!(send_pieces(&budget, c2, s2, 0, ReplayGaps::STREAMS, read));
        let mut third = pin!(send_pieces(&budget, c3, s3, 0, ReplayGaps::STREAMS, read));
        assert!(poll!(first.as_mut()).is_pending());
        assert!(poll!(second.as_mut()).is_pending());
        assert!(poll!(third.as_mut()).is_pending());
        assert_eq!(
            reading.get(),
            2,
            "the third replay waits for the budget, it does not read"
        );

        // The first piece read and sent: its share is back, and the third reads.
        store.notify_one();
        assert_eq!(first.as_mut().now_or_never().map(Result::unwrap), Some(Some(1)));
        assert!(poll!(third.as_mut()).is_pending());
        assert_eq!(reading.get(), 3);
        store.notify_one();
        store.notify_one();
        assert_eq!(second.await.unwrap(), Some(1));
        assert_eq!(third.await.unwrap(), Some(1));
    }
}
