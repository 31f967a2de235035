//! One generation against a real provider, run by hand (docs/generation.md):
//!
//! ```sh
//! OPENAI_API_KEY=sk-... SVC_LIVE_MODEL=openai:gpt-4.1-mini \
//!     cargo test -p svc-generation --test live_provider -- --ignored --nocapture
//! ```

use std::sync::Arc;

use serde_json::json;
use svc_application::ports::generation::{GenerationProgress, GenerationRequest, Generator, ProgressSink};
use svc_domain::model_route::{ModelEntry, ModelRegistry, parse_route_syntax};
use svc_generation::llm::{Flavour, LlmGenerator, LlmSettings, ProviderConfig, Wire};

struct Print;

#[async_trait::async_trait]
impl ProgressSink for Print {
    async fn report(&self, progress: GenerationProgress) {
        eprintln!("_svc:lifecycle {progress:?}");
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

#[tokio::test]
#[ignore = "calls a real provider; needs its API key (see docs/generation.md)"]
async fn one_generation_against_a_real_provider() {
    let route = env("SVC_LIVE_MODEL").unwrap_or_else(|| "openai:gpt-4.1-mini".into());
    let parsed = parse_route_syntax(&route).expect("SVC_LIVE_MODEL is provider:model");
    let ollama_base = env("OLLAMA_BASE_URL").unwrap_or_else(|| "http://127.0.0.1:11434".into());
    let providers = vec![
        ProviderConfig::new(
            "openai",
            Wire::OpenAi,
            "https://api.openai.com/v1",
            env("OPENAI_API_KEY"),
        ),
        ProviderConfig::new(
            "anthropic",
            Wire::Anthropic,
            "https://api.anthropic.com",
            env("ANTHROPIC_API_KEY"),
        ),
        ProviderConfig::new(
            "google",
            Wire::Gemini,
            "https://generativelanguage.googleapis.com",
            env("GEMINI_API_KEY"),
        ),
        ProviderConfig::new(
            "mistral",
            Wire::OpenAi,
            "https://api.mistral.ai/v1",
            env("MISTRAL_API_KEY"),
        ),
        ProviderConfig::new("ollama", Wire::Ollama, &ollama_base, None),
    ];
    let mut registry = ModelRegistry::builtin();
    if registry.get(&parsed).is_none() {
        registry = registry.with(ModelEntry {
            route: parsed,
            context_tokens: 32_768,
            structured_output: false,
            reasoning: false,
        });
    }
    let generator = LlmGenerator::new(
        Flavour::Advanced,
        providers,
        registry,
        Arc::new(svc_compiler::OxcCompiler::new()),
        LlmSettings::default(),
    )
    .with_render_check(Arc::new(svc_render_check::QuickJsRenderCheck::default()));
    let request = GenerationRequest {
        model: Some(route.clone()),
        ..GenerationRequest::new(
            "order approval",
            json!({
                "propsSpec": { "type": "object", "properties": {
                    "orderId": { "type": "string" }, "total": { "type": "number" },
                    "lines": { "type": "array", "items": { "type": "object", "properties": {
                        "item": { "type": "string" }, "qty": { "type": "integer" } } } } },
                    "required": ["orderId", "total"] },
                "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } },
                                "reject": { "schema": { "type": "object", "properties": { "reason": { "type": "string" } } } } }
            })
            .try_into()
            .unwrap(),
        )
        .with_persona(Some("Finance approver"))
    };
    let started = std::time::Instant::now();
    let component = generator
        .generate_with_progress(&request, &Print)
        .await
        .unwrap_or_else(|e| panic!("{route}: {e} ({})", e.render_code()));
    eprintln!(
        "{route}: {} characters in {:?}, validator score {:?}\n{}",
        component.source.len(),
        started.elapsed(),
        component.validator_score,
        component.source
    );
    assert!(component.source.contains("export default"));
}
