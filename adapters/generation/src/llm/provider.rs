//! A configured provider: which wire format it speaks, where, and with which key.

use reqwest::RequestBuilder;

use super::chat::{ChatRequest, DeltaStream};
use super::errors::ProviderError;
use super::{anthropic, gemini, ollama, openai};

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

    /// Sends `request` and returns the reply's deltas once the provider answered 2xx.
    pub async fn stream(&self, http: &reqwest::Client, request: &ChatRequest) -> Result<DeltaStream, ProviderError> {
        let builder = match self.wire {
            Wire::OpenAi => openai::request(http, self, request),
            Wire::Anthropic => anthropic::request(http, self, request),
            Wire::Gemini => gemini::request(http, self, request),
            Wire::Ollama => ollama::request(http, self, request),
        };
        let response = send(builder, &self.name).await?;
        Ok(match self.wire {
            Wire::OpenAi => openai::deltas(response, &self.name),
            Wire::Anthropic => anthropic::deltas(response, &self.name),
            Wire::Gemini => gemini::deltas(response, &self.name),
            Wire::Ollama => ollama::deltas(response, &self.name),
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
    let body = response.text().await.unwrap_or_default();
    Err(ProviderError::from_status(provider, status, &headers, &body))
}
