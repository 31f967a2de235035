//! Google Gemini, streamed (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`):
//! SSE `data:` frames of `GenerateContentResponse` objects; the last candidate carries a
//! `finishReason`, and there is no separate end marker.

use reqwest::RequestBuilder;
use serde_json::{Value, json};

use super::chat::{ChatRequest, DeltaStream, Role, Step, frames_to_deltas, malformed};
use super::errors::{ProviderError, ProviderErrorKind, body_message};
use super::provider::ProviderConfig;
use super::sse;

pub fn request(http: &reqwest::Client, provider: &ProviderConfig, chat: &ChatRequest) -> RequestBuilder {
    let contents: Vec<Value> = chat
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "model",
            };
            json!({ "role": role, "parts": [{ "text": m.content }] })
        })
        .collect();
    let mut body = json!({
        "systemInstruction": { "parts": [{ "text": chat.system }] },
        "contents": contents,
        "generationConfig": {
            "maxOutputTokens": chat.max_output_tokens,
            "temperature": chat.temperature,
        },
    });
    if chat.json_reply {
        // Gemini's schema dialect is an OpenAPI subset: no `additionalProperties`.
        body["generationConfig"]["responseMimeType"] = json!("application/json");
        body["generationConfig"]["responseSchema"] = json!({
            "type": "OBJECT",
            "properties": { "tsx": { "type": "STRING" } },
            "required": ["tsx"],
        });
    }
    let builder = http
        .post(format!(
            "{}/v1beta/models/{}:streamGenerateContent?alt=sse",
            provider.base_url, chat.model
        ))
        .json(&body);
    match &provider.api_key {
        Some(key) => builder.header("x-goog-api-key", key),
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
    let chunk: Value = match super::untrusted_json::parse(data) {
        Ok(chunk) => chunk,
        Err(e) => return Step::Fail(malformed(provider, data, e)),
    };
    if chunk.get("error").is_some() {
        let message = body_message(data).unwrap_or_else(|| data.to_owned());
        return Step::Fail(ProviderError::new(ProviderErrorKind::Unavailable, provider, message));
    }
    if let Some(reason) = chunk.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
        return Step::Fail(ProviderError::new(
            ProviderErrorKind::Rejected,
            provider,
            format!("the prompt was blocked ({reason})"),
        ));
    }
    let Some(candidate) = chunk.pointer("/candidates/0") else {
        // Usage-only frames carry no candidate.
        return if chunk.get("usageMetadata").is_some() {
            Step::Skip
        } else {
            Step::Fail(malformed(provider, data, "no `candidates`"))
        };
    };
    let text: String = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                // Thought summaries are not reply text.
                .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match candidate.get("finishReason").and_then(Value::as_str) {
        None | Some("FINISH_REASON_UNSPECIFIED") => Step::Text(text),
        Some("STOP" | "MAX_TOKENS") => Step::Finish(text),
        Some(other) => Step::Fail(ProviderError::new(
            ProviderErrorKind::Rejected,
            provider,
            format!("the reply was stopped ({other})"),
        )),
    }
}
