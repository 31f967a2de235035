//! Generation by language models: provider clients for four wire formats, and the pipeline that
//! turns a contract into a checked component (`docs/generation.md`).

mod anthropic;
mod chat;
mod errors;
mod extract;
mod framing;
mod gemini;
mod ndjson;
mod ollama;
mod openai;
mod pipeline;
mod prompt;
mod provider;
mod retry;
mod sse;
mod untrusted_json;
mod validator;

#[cfg(any(test, feature = "fake-provider"))]
pub mod fake_provider;

pub use chat::{ChatMessage, ChatRequest, DeltaStream, Role};
pub use errors::{ProviderError, ProviderErrorKind};
pub use extract::extract_tsx;
pub use framing::MAX_OUTPUT_TOKENS;
pub use pipeline::{Flavour, LlmGenerator, LlmSettings};
pub use provider::{ProviderConfig, Wire};
pub use retry::RetryPolicy;
pub use validator::REPAIR_BELOW;

#[cfg(test)]
mod tests;
