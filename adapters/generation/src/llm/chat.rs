//! The provider-neutral conversation every adapter translates into its own wire format, and the
//! stream of text deltas every adapter hands back.

use futures_util::stream::{BoxStream, Stream, StreamExt};

use super::errors::{ProviderError, ProviderErrorKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One model call: a system prompt and the turns so far.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<ChatMessage>,
    pub max_output_tokens: u32,
    pub temperature: f32,
    /// Constrain the reply to [`component_schema`] (providers with structured output).
    pub json_reply: bool,
    /// A reasoning model (`ModelEntry::reasoning`): OpenAI's wire sends `max_completion_tokens`
    /// and no `temperature`.
    pub reasoning: bool,
}

/// The JSON Schema of a structured reply: `{ "tsx": "<the component source>" }`.
pub fn component_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": { "tsx": { "type": "string", "description": "The whole TSX module of the component." } },
        "required": ["tsx"],
        "additionalProperties": false
    })
}

/// Text deltas of one reply, in order. The stream ends cleanly only after the provider's end
/// marker; a body that stops early yields a `Malformed` error last.
pub type DeltaStream = BoxStream<'static, Result<String, ProviderError>>;

/// What one frame (an SSE `data` payload or an NDJSON line) means.
pub enum Step {
    /// Reply text (possibly empty).
    Text(String),
    /// The provider said the reply is finished (a finish or stop reason), with the frame's text;
    /// the body may still carry trailing frames.
    Finish(String),
    /// The end marker: nothing follows.
    End,
    /// A frame without reply text (role announcements, pings, usage).
    Skip,
    /// An error the provider reported inside the stream.
    Fail(ProviderError),
}

/// Decodes frames into deltas with `decode`, checking that the body ends where the provider says.
pub fn frames_to_deltas<S, F>(frames: S, provider: String, decode: F) -> DeltaStream
where
    S: Stream<Item = Result<String, ProviderError>> + Send + Unpin + 'static,
    F: FnMut(&str) -> Step + Send + 'static,
{
    struct State<S, F> {
        frames: S,
        decode: F,
        provider: String,
        finished: bool,
        done: bool,
    }
    let state = State {
        frames,
        decode,
        provider,
        finished: false,
        done: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            let frame = match st.frames.next().await {
                Some(Ok(frame)) => frame,
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
                None if st.finished => return None,
                None => {
                    st.done = true;
                    let e = ProviderError::new(
                        ProviderErrorKind::Malformed,
                        &st.provider,
                        "the stream ended before the provider's end marker",
                    );
                    return Some((Err(e), st));
                }
            };
            match (st.decode)(&frame) {
                Step::Text(text) if !text.is_empty() => return Some((Ok(text), st)),
                Step::Text(_) | Step::Skip => {}
                Step::Finish(text) => {
                    st.finished = true;
                    if !text.is_empty() {
                        return Some((Ok(text), st));
                    }
                }
                Step::End => return None,
                Step::Fail(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}

/// A frame that is not the JSON the provider documents.
pub fn malformed(provider: &str, frame: &str, why: impl std::fmt::Display) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Malformed,
        provider,
        format!(
            "unexpected stream frame ({why}): {}",
            super::errors::truncate(frame, 120)
        ),
    )
}
