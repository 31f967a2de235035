//! Server-sent events from a streaming response: each item is one event's `data` (events
//! without data, such as comments, are dropped). Framed by `framing`: bounded and incremental.

use futures_util::stream::BoxStream;

use super::errors::ProviderError;
use super::framing::{self, MAX_FRAME_BYTES, SseEvents};

/// The events of `response`, reading at most `max_reply` body bytes.
pub fn data_frames(
    response: reqwest::Response,
    provider: &str,
    max_reply: u64,
) -> BoxStream<'static, Result<String, ProviderError>> {
    framing::frames(response, provider, max_reply, SseEvents::new(MAX_FRAME_BYTES))
}
