//! A configured provider: which wire format it speaks, where, and with which key.

use reqwest::RequestBuilder;

use super::chat::{ChatRequest, DeltaStream};
use super::errors::ProviderError;
use super::framing::max_reply_bytes;
use super::{anthropic, gemini, ollama, openai};

/// The part of an error body read: enough for any provider's JSON error message; the rest is
/// never taken off the wire (the connection is closed).
pub const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// The four wire formats spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions with `stream: true` (SSE); also Mistral, vLLM, llama.cpp, LM
    /// Studio and Ollama's `/v1` endpoint.
    OpenAi,
    /// Anthropic Messages with `stream: true` (SSE with named events).
    Anthropic,
    /// Google Gemini `streamGenerateContent?alt=sse`.
    Gemini,
    /// Ollama's native `/api/chat` (newline-delimited JSON).
    Ollama,
}

impl Wire {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "openai" => Some(Self::OpenAi),
            "anthropic" => Some(Self::Anthropic),
            "gemini" => Some(Self::Gemini),
            "ollama" => Some(Self::Ollama),
            _ => None,
        }
    }
}

/// One provider of the deployment (`[generation.providers.<name>]`).
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The route prefix: `openai` in `openai:gpt-4o`.
    pub name: String,
    pub wire: Wire,
    /// Without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// Local servers (Ollama, vLLM) answer without a key.
    pub key_required: bool,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("wire", &self.wire)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("key_required", &self.key_required)
            .finish()
    }
}

impl ProviderConfig {
    pub fn new(name: &str, wire: Wire, base_url: &str, api_key: Option<String>) -> Self {
        Self {
            name: name.to_owned(),
            wire,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()),
            key_required: wire != Wire::Ollama,
        }
    }

    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Sends `request` and returns the reply's deltas once the provider answered 2xx. The reply
    /// is read up to [`max_reply_bytes`] of the request's token budget.
    pub async fn stream(&self, http: &reqwest::Client, request: &ChatRequest) -> Result<DeltaStream, ProviderError> {
        let builder = match self.wire {
            Wire::OpenAi => openai::request(http, self, request),
            Wire::Anthropic => anthropic::request(http, self, request),
            Wire::Gemini => gemini::request(http, self, request),
            Wire::Ollama => ollama::request(http, self, request),
        };
        let response = send(builder, &self.name).await?;
        let max_reply = max_reply_bytes(request.max_output_tokens);
        Ok(match self.wire {
            Wire::OpenAi => openai::deltas(response, &self.name, max_reply),
            Wire::Anthropic => anthropic::deltas(response, &self.name, max_reply),
            Wire::Gemini => gemini::deltas(response, &self.name, max_reply),
            Wire::Ollama => ollama::deltas(response, &self.name, max_reply),
        })
    }
}

async fn send(builder: RequestBuilder, provider: &str) -> Result<reqwest::Response, ProviderError> {
    let response = builder
        .send()
        .await
        .map_err(|e| ProviderError::from_transport(provider, &e))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let headers = response.headers().clone();
    let body = read_error_body(response).await;
    Err(ProviderError::from_status(provider, status, &headers, &body))
}

/// At most [`MAX_ERROR_BODY_BYTES`] of an error answer, by chunks: a body of gigabytes, declared
/// or not, costs no more. A transport error ends the body where it is: the status says enough.
async fn read_error_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == MAX_ERROR_BODY_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}
