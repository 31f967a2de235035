//! Ollama's native chat API, streamed (`POST {base}/api/chat`, `stream: true`): one JSON object
//! per line, `{"message": {"content": ...}, "done": false}`, the last with `"done": true`; an
//! error is `{"error": "..."}` (as a body with a 4xx/5xx status, or as a line mid-stream).

use reqwest::RequestBuilder;
use serde_json::{Value, json};

use super::chat::{ChatRequest, DeltaStream, Role, Step, component_schema, frames_to_deltas, malformed};
use super::errors::{ProviderError, ProviderErrorKind};
use super::ndjson;
use super::provider::ProviderConfig;

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
        "options": { "num_predict": chat.max_output_tokens, "temperature": chat.temperature },
    });
    if chat.json_reply {
        body["format"] = component_schema();
    }
    let builder = http.post(format!("{}/api/chat", provider.base_url)).json(&body);
    match &provider.api_key {
        // A proxy in front of Ollama may want a bearer.
        Some(key) => builder.bearer_auth(key),
        None => builder,
    }
}

pub fn deltas(response: reqwest::Response, provider: &str, max_reply: u64) -> DeltaStream {
    let name = provider.to_owned();
    frames_to_deltas(
        ndjson::lines(response, provider, max_reply),
        name.clone(),
        move |line| decode(&name, line),
    )
}

fn decode(provider: &str, line: &str) -> Step {
    let chunk: Value = match super::untrusted_json::parse(line) {
        Ok(chunk) => chunk,
        Err(e) => return Step::Fail(malformed(provider, line, e)),
    };
    if let Some(error) = chunk.get("error") {
        let message = error.as_str().map_or_else(|| error.to_string(), str::to_owned);
        return Step::Fail(ProviderError::new(ProviderErrorKind::Unavailable, provider, message));
    }
    let text = chunk
        .pointer("/message/content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match chunk.get("done").and_then(Value::as_bool) {
        Some(true) => {
            // The final line may still carry text; End would drop it, so emit it first.
            if text.is_empty() { Step::End } else { Step::Finish(text) }
        }
        Some(false) => Step::Text(text),
        None => Step::Fail(malformed(provider, line, "no `done`")),
    }
}
