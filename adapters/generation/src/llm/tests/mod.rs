//! Each adapter against the loopback fake speaking its provider's wire format (recorded-style
//! fixtures in `fixtures/`), every error path, and the pipeline's repair round.

mod limits;
mod outcomes;
mod repair;
mod wire_formats;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use svc_application::ports::generation::{
    GenerationError, GenerationProgress, GenerationRequest, GenerationStage, Generator, ProgressSink, RenderCheck,
    RenderCheckFailure, RenderCheckInput,
};
use svc_domain::model_route::{ModelEntry, ModelRegistry, parse_route_syntax};

use super::fake_provider::{FakeProvider, FakeReply};
use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The four providers, all pointed at one fake, each with its route.
fn providers(fake: &FakeProvider) -> Vec<(ProviderConfig, &'static str)> {
    vec![
        (
            ProviderConfig::new(
                "openai",
                Wire::OpenAi,
                &format!("{}/v1", fake.base_url),
                Some("sk-test".into()),
            ),
            "openai:gpt-4.1-mini",
        ),
        (
            ProviderConfig::new("anthropic", Wire::Anthropic, &fake.base_url, Some("sk-ant-test".into())),
            "anthropic:claude-sonnet-4-5",
        ),
        (
            ProviderConfig::new("google", Wire::Gemini, &fake.base_url, Some("AIza-test".into())),
            "google:gemini-2.5-flash",
        ),
        (
            ProviderConfig::new("ollama", Wire::Ollama, &fake.base_url, None),
            "ollama:llama3.1",
        ),
    ]
}

fn registry() -> ModelRegistry {
    ModelRegistry::builtin().with(ModelEntry {
        route: parse_route_syntax("ollama:llama3.1").unwrap(),
        context_tokens: 131_072,
        structured_output: true,
        reasoning: false,
    })
}

fn fast_settings() -> LlmSettings {
    LlmSettings {
        attempt_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_millis(300),
        retry: RetryPolicy {
            max_attempts: 3,
            base_backoff: Duration::from_millis(10),
            max_wait: Duration::from_secs(2),
        },
        ..LlmSettings::default()
    }
}

/// The pipeline as the server wires it: every component that compiles is also rendered once.
fn generator(fake: &FakeProvider, flavour: Flavour, settings: LlmSettings) -> LlmGenerator {
    LlmGenerator::new(
        flavour,
        providers(fake).into_iter().map(|(p, _)| p).collect(),
        registry(),
        Arc::new(svc_compiler::OxcCompiler::new()),
        settings,
    )
    .with_render_check(Arc::new(svc_render_check::QuickJsRenderCheck::default()))
}

fn chat(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        system: "be brief".into(),
        messages: vec![ChatMessage::user("hello")],
        max_output_tokens: 256,
        temperature: 0.0,
        json_reply: false,
        reasoning: false,
    }
}

async fn collect(provider: &ProviderConfig, request: &ChatRequest) -> Result<String, ProviderError> {
    let mut deltas = provider.stream(&reqwest::Client::new(), request).await?;
    let mut text = String::new();
    while let Some(delta) = deltas.next().await {
        text.push_str(&delta?);
    }
    Ok(text)
}

fn request_for(route: &str, contract: serde_json::Value) -> GenerationRequest {
    GenerationRequest {
        model: Some(route.into()),
        ..GenerationRequest::new("order approval", contract.try_into().unwrap())
    }
}

fn title_contract() -> serde_json::Value {
    json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } })
}

const GOOD: &str = "import { useProps } from \"@svc/gadgets\";\n\
    export default function Card() {\n\
      const { title } = useProps<{ title: string }>();\n\
      return <h2 style={{ color: \"var(--svc-color-fg)\" }}>{title}</h2>;\n\
    }";

const BROKEN: &str = "import { useProps } from \"@svc/gadgets\";\n\
    export function Card() {\n\
      const data = fetch(\"https://example.com/x\");\n\
      return <h2>{String(data)}</h2>;\n\
    }";
