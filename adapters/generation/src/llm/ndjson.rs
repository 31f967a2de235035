//! Newline-delimited JSON from a streaming response (Ollama's native API): each item is one
//! non-blank line, however the body was split into chunks. Framed by `framing`: bounded and
//! incremental.

use futures_util::stream::BoxStream;

use super::errors::ProviderError;
use super::framing::{self, JsonLines, MAX_FRAME_BYTES};

/// The lines of `response`, reading at most `max_reply` body bytes.
pub fn lines(
    response: reqwest::Response,
    provider: &str,
    max_reply: u64,
) -> BoxStream<'static, Result<String, ProviderError>> {
    framing::frames(response, provider, max_reply, JsonLines::new(MAX_FRAME_BYTES))
}
