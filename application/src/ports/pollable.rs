//! Tools the live channel may poll for `streamSpec[*].source.tool` channels.

use std::time::Duration;

use serde_json::Value;

/// The session a poll is made for; adapters may pass it on (an HTTP source sends it as headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollTarget {
    pub session_id: String,
    pub app_id: String,
    pub channel: String,
    /// The largest payload the caller accepts; an adapter stops reading past it.
    pub max_bytes: usize,
}

/// Why one poll produced no payload. Each becomes a `channel_error` code (docs/live-channel.md).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PollFailure {
    /// The tool answered with a failure (an HTTP status other than 2xx, a refused connection).
    #[error("{0}")]
    Failed(String),
    /// The answer was not JSON.
    #[error("{0}")]
    NotJson(String),
    /// The answer was larger than `PollTarget::max_bytes`.
    #[error("the result is larger than {0} bytes")]
    TooLarge(usize),
    /// The session behind the channel is gone or expired.
    #[error("the session expired")]
    SessionGone,
}

/// One pollable tool. Implementations must be read-only: a poll may run every interval for as
/// long as a card shows the channel.
#[async_trait::async_trait]
pub trait PollableTool: Send + Sync {
    /// The shortest interval this tool may be polled at, and the interval used when the contract
    /// asks for none.
    fn interval(&self) -> Duration;

    /// How long one poll may take before it counts as `POLL_TIMEOUT`; `None`: the server default.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    async fn poll(&self, target: &PollTarget) -> Result<Value, PollFailure>;
}
