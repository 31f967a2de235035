//! OpenAI Chat Completions, streamed (`POST {base}/chat/completions`, `stream: true`): SSE
//! `data:` frames of `chat.completion.chunk` objects, then `data: [DONE]`.

use reqwest::RequestBuilder;
use serde_json::{Value, json};

use super::chat::{ChatRequest, DeltaStream, Role, Step, component_schema, frames_to_deltas, malformed};
use super::errors::{ProviderError, ProviderErrorKind, body_message};
use super::provider::ProviderConfig;
use super::sse;

pub fn request(http: &reqwest::Client, provider: &ProviderConfig, chat: &ChatRequest) -> RequestBuilder {
    let mut messages = vec![json!({ "role": "system", "content": chat.system })];
    messages.extend(chat.messages.iter().map(|m| {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        json!({ "role": role, "content": m.content })
    }));
    let mut body = json!({
        "model": chat.model,
        "messages": messages,
        "stream": true,
    });
    if chat.reasoning {
        // Reasoning models refuse `max_tokens` and any temperature but the default; their
        // completion budget covers the hidden reasoning tokens too.
        body["max_completion_tokens"] = json!(chat.max_output_tokens);
    } else {
        body["max_tokens"] = json!(chat.max_output_tokens);
        body["temperature"] = json!(chat.temperature);
    }
    if chat.json_reply {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": { "name": "component", "strict": true, "schema": component_schema() },
        });
    }
    let builder = http
        .post(format!("{}/chat/completions", provider.base_url))
        .header("accept", "text/event-stream")
        .json(&body);
    match &provider.api_key {
        Some(key) => builder.bearer_auth(key),
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
    if data.trim() == "[DONE]" {
        return Step::End;
    }
    let chunk: Value = match super::untrusted_json::parse(data) {
        Ok(chunk) => chunk,
        Err(e) => return Step::Fail(malformed(provider, data, e)),
    };
    if chunk.get("error").is_some() {
        let message = body_message(data).unwrap_or_else(|| data.to_owned());
        let kind = if message.to_lowercase().contains("overloaded") || message.contains("rate limit") {
            ProviderErrorKind::Overloaded
        } else {
            ProviderErrorKind::Unavailable
        };
        return Step::Fail(ProviderError::new(kind, provider, message));
    }
    let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
        return Step::Fail(malformed(provider, data, "no `choices`"));
    };
    // A trailing usage chunk has no choices.
    let Some(choice) = choices.first() else {
        return Step::Skip;
    };
    let text = choice
        .pointer("/delta/content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match choice.get("finish_reason") {
        Some(reason) if !reason.is_null() => Step::Finish(text),
        _ => Step::Text(text),
    }
}
