//! The tool channels of one socket: a polling task per `channel_subscribe`, stopped by
//! `channel_unsubscribe`, by a new `subscribe` and by the socket closing (drop aborts them all).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use svc_application::services::tool_channels::{ChannelError, ChannelPlan, ToolChannelService};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::frames;

/// Frames the pollers may queue before they wait for the socket.
const QUEUED_FRAMES: usize = 16;

pub struct ToolChannels {
    running: HashMap<String, JoinHandle<()>>,
    /// When each channel was last polled on this socket (by any of its pollers): a channel
    /// subscribed again (after an unsubscribe, or on a new binding) first polls one interval
    /// after that, so alternating `channel_unsubscribe` and `channel_subscribe` cannot poll the
    /// source faster than its plan allows. Keyed by declared channels only (a plan exists), so
    /// bounded.
    last_polls: HashMap<String, LastPoll>,
    /// The pollers' queue, made by the first `channel_subscribe`: most sockets never send one,
    /// and an idle socket should not hold a channel's buffers.
    queue: Option<(mpsc::Sender<String>, mpsc::Receiver<String>)>,
}

impl ToolChannels {
    fn new() -> Self {
        Self {
            running: HashMap::new(),
            last_polls: HashMap::new(),
            queue: None,
        }
    }

    /// The channels of a new binding of the socket, keeping the pacing of `earlier` (whose
    /// pollers stop when it is dropped).
    pub fn following(earlier: Option<&mut ToolChannels>) -> Self {
        let mut channels = Self::new();
        if let Some(earlier) = earlier {
            channels.last_polls = std::mem::take(&mut earlier.last_polls);
        }
        channels
    }

    /// The next frame a poller produced; pending while there is none.
    pub async fn next_frame(&mut self) -> String {
        let Some((_, rx)) = self.queue.as_mut() else {
            return std::future::pending().await;
        };
        match rx.recv().await {
            Some(frame) => frame,
            // Unreachable while the queue's sender lives, but never spin.
            None => std::future::pending().await,
        }
    }

    /// Starts polling `channel`; the first poll runs at once, or one interval after the channel's
    /// last poll on this socket. Subscribing a channel that is already polled changes nothing.
    pub fn subscribe(
        &mut self,
        service: &ToolChannelService,
        channel: &str,
        plan: Result<ChannelPlan, ChannelError>,
    ) -> Vec<String> {
        let plan = match plan {
            Ok(plan) => plan,
            Err(e) => return vec![error_frame_for(&e, channel)],
        };
        let channel = plan.target.channel.clone();
        if self.running.contains_key(&channel) {
            return vec![];
        }
        let limit = service.settings().max_channels_per_socket;
        if self.running.len() >= limit {
            return vec![error_frame_for(&ChannelError::TooManyChannels(limit), &channel)];
        }
        let last_poll = self.last_polls.entry(channel.clone()).or_default().clone();
        let now = Instant::now();
        let first = last_poll.get().map_or(now, |last| (last + plan.interval).max(now));
        let (tx, _) = self.queue.get_or_insert_with(|| mpsc::channel(QUEUED_FRAMES));
        let task = tokio::spawn(poll_loop(service.clone(), plan, first, last_poll, tx.clone()));
        self.running.insert(channel, task);
        vec![]
    }

    /// Stops polling `channel`; unknown channels are fine (idempotent).
    pub fn unsubscribe(&mut self, channel: &str) {
        if let Some(task) = self.running.remove(channel) {
            task.abort();
        }
    }
}

impl Drop for ToolChannels {
    fn drop(&mut self) {
        for task in self.running.values() {
            task.abort();
        }
    }
}

/// When a channel was last polled, shared by the socket and the channel's poller.
#[derive(Clone, Default)]
struct LastPoll(Arc<Mutex<Option<Instant>>>);

impl LastPoll {
    fn get(&self) -> Option<Instant> {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set(&self, at: Instant) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(at);
    }
}

/// A `channel_error` frame for `channel`.
pub fn error_frame_for(error: &ChannelError, channel: &str) -> String {
    frames::frame(
        "channel_error",
        json!({ "channel": channel, "code": error.code(), "message": error.to_string() }),
    )
}

/// Polls until aborted or the socket is gone. A payload is sent when it differs from the last
/// one sent (and after an error); an error is sent when it differs from the last error.
async fn poll_loop(
    service: ToolChannelService,
    plan: ChannelPlan,
    first: Instant,
    last_poll: LastPoll,
    tx: mpsc::Sender<String>,
) {
    let channel = plan.target.channel.clone();
    let mut ticker = tokio::time::interval_at(first, plan.interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_sent: Option<String> = None;
    let mut seq: u64 = 0;
    loop {
        last_poll.set(ticker.tick().await);
        let (fingerprint, frame, session_gone) = match service.poll(&plan).await {
            Ok(payload) => {
                let text = payload.to_string();
                if last_sent.as_deref() == Some(text.as_str()) {
                    continue;
                }
                seq += 1;
                let frame = frames::frame(
                    "channel_payload",
                    json!({ "channel": channel, "tool": plan.tool_name, "seq": seq, "payload": payload }),
                );
                (text, frame, false)
            }
            Err(e) => {
                let fingerprint = format!("\u{0}error:{}:{e}", e.code());
                if last_sent.as_deref() == Some(fingerprint.as_str()) {
                    continue;
                }
                let gone = e == ChannelError::SessionExpired;
                (fingerprint, error_frame_for(&e, &channel), gone)
            }
        };
        last_sent = Some(fingerprint);
        if tx.send(frame).await.is_err() || session_gone {
            return;
        }
    }
}
