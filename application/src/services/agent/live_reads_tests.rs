//! Every socket of a session that hears a large emit's marker asks the store for the same
//! envelope: the store is read, and the frame rendered, once for all of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::render_tests::render_once;
use super::*;
use crate::ports::RepositoryError;
use crate::ports::agent::{
    ActionEventRecord, DrainBound, EventBus, EventRepository, LIVE_EVENT_INLINE_BYTES, LiveEvent, NewActionEvent,
    StreamEnvelope, WindowHead,
};
use crate::ports::retention::ReplayWindow;
use crate::testing::{AgentFakes, InMemoryAgentStore};

/// The fakes' event store, counting the envelope reads of the live tail (`streams_since`); each
/// such read yields once first, as a store's round trip would, so the callers overlap.
struct CountingReads {
    inner: Arc<InMemoryAgentStore>,
    reads: AtomicUsize,
}

type Result<T> = std::result::Result<T, RepositoryError>;

#[async_trait::async_trait]
impl EventRepository for CountingReads {
    async fn append_action(&self, event: &NewActionEvent) -> Result<(ActionEventRecord, bool)> {
        self.inner.append_action(event).await
    }

    async fn drain(&self, session_id: &str, at: DateTime<Utc>, bound: DrainBound) -> Result<Vec<ActionEventRecord>> {
        self.inner.drain(session_id, at, bound).await
    }

    async fn append_stream(
        &self,
        session_id: &str,
        channel: &str,
        mode: &str,
        payload: &Value,
        complete: bool,
        at: DateTime<Utc>,
    ) -> Result<StreamEnvelope> {
        self.inner
            .append_stream(session_id, channel, mode, payload, complete, at)
            .await
    }

    async fn streams_since(
        &self,
        session_id: &str,
        after_seq: i64,
        until: Option<i64>,
        limit: u64,
        max_payload_bytes: usize,
    ) -> Result<Vec<StreamEnvelope>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        self.inner
            .streams_since(session_id, after_seq, until, limit, max_payload_bytes)
            .await
    }

    async fn streams_window_head(
        &self,
        session_id: &str,
        after_seq: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<StreamEnvelope>> {
        self.inner
            .streams_window_head(session_id, after_seq, window, read_bytes)
            .await
    }

    async fn last_stream_seq(&self, session_id: &str) -> Result<i64> {
        self.inner.last_stream_seq(session_id).await
    }

    async fn actions_since(
        &self,
        session_id: &str,
        after_sequence: i64,
        limit: u64,
        max_bytes: usize,
    ) -> Result<Vec<ActionEventRecord>> {
        self.inner
            .actions_since(session_id, after_sequence, limit, max_bytes)
            .await
    }

    async fn actions_window_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<ActionEventRecord>> {
        self.inner
            .actions_window_head(session_id, after_sequence, window, read_bytes)
            .await
    }
}

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    })
}

/// A transport's renderer: one frame per envelope, its `seq` and payload.
fn render(replay: Replay<StreamEnvelope>) -> Vec<String> {
    replay
        .items
        .iter()
        .map(|e| json!({ "seq": e.seq, "payload": e.payload }).to_string())
        .collect()
}

/// The frames a socket would send: the `seq` and payload of each.
fn sent(frames: &[String]) -> Vec<(i64, Value)> {
    frames
        .iter()
        .map(|f| {
            let frame: Value = serde_json::from_str(f).unwrap();
            (frame["seq"].as_i64().unwrap(), frame["payload"].clone())
        })
        .collect()
}

#[tokio::test]
async fn sockets_hearing_a_large_emits_marker_share_one_store_read_and_one_rendering() {
    let fakes = AgentFakes::default();
    let counting = Arc::new(CountingReads {
        inner: fakes.store.clone(),
        reads: AtomicUsize::new(0),
    });
    let mut ports = fakes.ports();
    ports.events = counting.clone();
    let service = AgentService::new(
        ports,
        AgentFakes::settings(),
        GenerationQueue::new(2, 2, Duration::from_secs(5)),
    );
    let caller = AgentFakes::caller("app-1");
    let session_id = render_once(&service, &caller, "log card", contract()).await.session_id;
    service
        .emit(&caller, &session_id, "log", json!("small"), false)
        .await
        .unwrap();
    // Four sockets of the session, caught up to the small emit, hear the large one's marker.
    let mut sockets: Vec<_> = (0..4).map(|_| fakes.bus.subscribe(&session_id)).collect();
    let large = json!("x".repeat(LIVE_EVENT_INLINE_BYTES));
    service
        .emit(&caller, &session_id, "log", large.clone(), false)
        .await
        .unwrap();
    let mut heard = vec![];
    for socket in &mut sockets {
        match socket.try_recv().unwrap().event() {
            LiveEvent::DataStored { seq, .. } => heard.push(*seq),
            other => panic!("a large emit travels as its marker, not {other:?}"),
        }
    }
    let seq = heard[0];
    assert_eq!(heard, [seq; 4], "every socket heard the one marker");
    counting.reads.store(0, Ordering::SeqCst);

    // Each socket reads its envelopes after its cursor up to the marker's seq, all at once, each
    // taking its transport's share before a read.
    let shares = AtomicUsize::new(0);
    let share = || async { shares.fetch_add(1, Ordering::SeqCst) };
    let read = |_| service.stream_frames_until(&session_id, seq - 1, seq, share(), render);
    let answers = futures_join_all(heard.iter().map(read)).await;
    for frames in &answers {
        assert_eq!(
            sent(frames.as_ref().unwrap()),
            [(seq, large.clone())],
            "every socket sends the envelope"
        );
    }
    assert_eq!(counting.reads.load(Ordering::SeqCst), 1, "the store was read once");
    assert_eq!(shares.load(Ordering::SeqCst), 1, "only the read took a share");
    let first = answers[0].as_ref().unwrap();
    assert!(
        answers.iter().all(|a| Arc::ptr_eq(a.as_ref().unwrap(), first)),
        "the frame was rendered once, for every socket"
    );

    // A socket further behind asks for more: its own read, with the envelope it missed.
    let behind = service
        .stream_frames_until(&session_id, seq - 2, seq, share(), render)
        .await
        .unwrap();
    assert_eq!(sent(&behind), [(seq - 1, json!("small")), (seq, large)]);
    assert_eq!(counting.reads.load(Ordering::SeqCst), 2);
}

/// Polls every future together (as sockets' tasks run at once) and gives their outputs in order.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in pinned.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(out) => *output = Some(out),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(Option::unwrap).collect()
}
