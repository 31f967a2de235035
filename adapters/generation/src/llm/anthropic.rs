//! Anthropic Messages, streamed (`POST {base}/v1/messages`, `stream: true`): SSE events
//! `message_start`, `content_block_start`, `content_block_delta` (`text_delta`), `ping`,
//! `content_block_stop`, `message_delta` (with `stop_reason`), `message_stop`, and `error`.

use reqwest::RequestBuilder;
use serde_json::{Value, json};

use super::chat::{ChatRequest, DeltaStream, Role, Step, frames_to_deltas, malformed};
use super::errors::{ProviderError, ProviderErrorKind};
use super::provider::ProviderConfig;
use super::sse;

pub const API_VERSION: &str = "2023-06-01";

pub fn request(http: &reqwest::Client, provider: &ProviderConfig, chat: &ChatRequest) -> RequestBuilder {
    let messages: Vec<Value> = chat
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({ "role": role, "content": m.content })
        })
        .collect();
    let body = json!({
        "model": chat.model,
        "system": chat.system,
        "messages": messages,
        "max_tokens": chat.max_output_tokens,
        "temperature": chat.temperature,
        "stream": true,
    });
    let builder = http
        .post(format!("{}/v1/messages", provider.base_url))
        .header("anthropic-version", API_VERSION)
        .header("accept", "text/event-stream")
        .json(&body);
    match &provider.api_key {
        Some(key) => builder.header("x-api-key", key),
        None => builder,
    }
}

pub fn deltas(response: reqwest::Response, provider: &str, max_reply: u64) -> DeltaStream {
    let name = provider.to_owned();
    frames_to_deltas(
        sse::data_frames(response, provider, max_reply),
        name.clone(),
        move |data| decode(&name, data),
    )
}

fn decode(provider: &str, data: &str) -> Step {
    let event: Value = match super::untrusted_json::parse(data) {
        Ok(event) => event,
        Err(e) => return Step::Fail(malformed(provider, data, e)),
    };
    match event.get("type").and_then(Value::as_str) {
        Some("content_block_delta") => match event.pointer("/delta/type").and_then(Value::as_str) {
            Some("text_delta") => Step::Text(
                event
                    .pointer("/delta/text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            ),
            // Thinking and tool-input deltas are not reply text.
            _ => Step::Skip,
        },
        Some("message_delta") if event.pointer("/delta/stop_reason").is_some_and(|r| !r.is_null()) => {
            Step::Finish(String::new())
        }
        Some("message_stop") => Step::End,
        Some("error") => {
            let kind = match event.pointer("/error/type").and_then(Value::as_str) {
                Some("overloaded_error") => ProviderErrorKind::Overloaded,
                Some("rate_limit_error") => ProviderErrorKind::RateLimited,
                Some("authentication_error" | "permission_error") => ProviderErrorKind::Unauthorized,
                Some("invalid_request_error" | "not_found_error" | "request_too_large") => ProviderErrorKind::Rejected,
                _ => ProviderErrorKind::Unavailable,
            };
            let message = event
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("error event without a message");
            Step::Fail(ProviderError::new(kind, provider, message))
        }
        Some(_) => Step::Skip,
        None => Step::Fail(malformed(provider, data, "no `type`")),
    }
}
