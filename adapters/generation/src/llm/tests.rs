//! Each adapter against the loopback fake speaking its provider's wire format (recorded-style
//! fixtures in `fixtures/`), every error path, and the pipeline's repair round.

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
        ..GenerationRequest::new("order approval", contract)
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

// ---------------------------------------------------------------- wire formats

#[tokio::test]
async fn each_adapter_decodes_its_recorded_stream_exactly() {
    let fake = FakeProvider::start().await;
    let expected = fixture("expected_reply.txt");
    let recordings = [
        FakeReply::sse(&fixture("openai_stream.sse")),
        FakeReply::sse(&fixture("anthropic_stream.sse")),
        FakeReply::sse(&fixture("gemini_stream.sse")),
        FakeReply::ndjson(&fixture("ollama_stream.ndjson")),
    ];
    for ((provider, route), recording) in providers(&fake).into_iter().zip(recordings) {
        fake.push(recording);
        let model = route.split_once(':').unwrap().1;
        let text = collect(&provider, &chat(model))
            .await
            .unwrap_or_else(|e| panic!("{route}: {e}"));
        assert_eq!(text, expected, "{route}");
    }
}

#[tokio::test]
async fn each_adapter_sends_its_providers_request_shape() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::text("ok"));
    for (provider, route) in providers(&fake) {
        let model = route.split_once(':').unwrap().1;
        assert_eq!(collect(&provider, &chat(model)).await.unwrap(), "ok", "{route}");
    }
    let requests = fake.requests();
    let openai = &requests[0];
    assert_eq!(openai.path, "/v1/chat/completions");
    assert_eq!(openai.credential.as_deref(), Some("Bearer sk-test"));
    assert_eq!(openai.body["stream"], true);
    assert_eq!(
        openai.body["messages"][0],
        json!({ "role": "system", "content": "be brief" })
    );
    assert_eq!(
        openai.body["messages"][1],
        json!({ "role": "user", "content": "hello" })
    );

    let anthropic = &requests[1];
    assert_eq!(anthropic.path, "/v1/messages");
    assert_eq!(anthropic.credential.as_deref(), Some("sk-ant-test"));
    assert_eq!(anthropic.anthropic_version.as_deref(), Some("2023-06-01"));
    assert_eq!(anthropic.body["system"], "be brief");
    assert_eq!(anthropic.body["max_tokens"], 256);
    assert_eq!(
        anthropic.body["messages"],
        json!([{ "role": "user", "content": "hello" }])
    );

    let gemini = &requests[2];
    assert_eq!(gemini.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    assert_eq!(gemini.query, "alt=sse");
    assert_eq!(gemini.credential.as_deref(), Some("AIza-test"));
    assert_eq!(gemini.body["systemInstruction"]["parts"][0]["text"], "be brief");
    assert_eq!(
        gemini.body["contents"][0],
        json!({ "role": "user", "parts": [{ "text": "hello" }] })
    );
    assert_eq!(gemini.body["generationConfig"]["maxOutputTokens"], 256);

    let ollama = &requests[3];
    assert_eq!(ollama.path, "/api/chat");
    assert_eq!(ollama.credential, None);
    assert_eq!(ollama.body["stream"], true);
    assert_eq!(ollama.body["options"]["num_predict"], 256);
}

#[tokio::test]
async fn a_stream_cut_before_its_end_marker_is_malformed_on_every_wire() {
    let fake = FakeProvider::start().await;
    for (provider, route) in providers(&fake) {
        fake.push(FakeReply::Truncated {
            text: "export default function".into(),
        });
        let model = route.split_once(':').unwrap().1;
        let error = collect(&provider, &chat(model)).await.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Malformed, "{route}: {error}");
    }
}

#[tokio::test]
async fn garbage_frames_are_malformed_on_every_wire() {
    let fake = FakeProvider::start().await;
    for (provider, route) in providers(&fake) {
        let garbage = if provider.wire == Wire::Ollama {
            FakeReply::ndjson("<html>502 Bad Gateway</html>\n")
        } else {
            FakeReply::sse("data: <html>502 Bad Gateway</html>\n\n")
        };
        fake.push(garbage);
        let model = route.split_once(':').unwrap().1;
        let error = collect(&provider, &chat(model)).await.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Malformed, "{route}: {error}");
    }
}

#[tokio::test]
async fn provider_error_bodies_and_mid_stream_errors_are_classified() {
    let fake = FakeProvider::start().await;
    let all = providers(&fake);
    let cases: Vec<(usize, FakeReply, ProviderErrorKind, &str)> = vec![
        (
            0,
            FakeReply::status(401, fixture("openai_401.json")),
            ProviderErrorKind::Unauthorized,
            "Incorrect API key",
        ),
        (
            0,
            FakeReply::status(429, fixture("openai_429.json")),
            ProviderErrorKind::RateLimited,
            "Rate limit reached",
        ),
        (
            1,
            FakeReply::status(401, fixture("anthropic_401.json")),
            ProviderErrorKind::Unauthorized,
            "invalid x-api-key",
        ),
        (
            1,
            FakeReply::status(529, fixture("anthropic_529.json")),
            ProviderErrorKind::Overloaded,
            "Overloaded",
        ),
        (
            1,
            FakeReply::sse(&fixture("anthropic_overloaded.sse")),
            ProviderErrorKind::Overloaded,
            "Overloaded",
        ),
        (
            2,
            FakeReply::status(400, fixture("gemini_400.json")),
            ProviderErrorKind::Rejected,
            "API key not valid",
        ),
        (
            2,
            FakeReply::status(429, fixture("gemini_429.json")),
            ProviderErrorKind::RateLimited,
            "exceeded your current quota",
        ),
        (
            3,
            FakeReply::status(404, fixture("ollama_404.json")),
            ProviderErrorKind::Rejected,
            "try pulling it first",
        ),
        (
            3,
            FakeReply::ndjson("{\"error\":\"llama runner process has terminated\"}\n"),
            ProviderErrorKind::Unavailable,
            "terminated",
        ),
    ];
    for (index, reply, kind, needle) in cases {
        let (provider, route) = &all[index];
        fake.push(reply);
        let model = route.split_once(':').unwrap().1;
        let error = collect(provider, &chat(model)).await.unwrap_err();
        assert_eq!(error.kind, kind, "{route}: {error}");
        assert!(error.message.contains(needle), "{route}: {error}");
    }
}

// ---------------------------------------------------------------- outcomes and retries

async fn generate_once(
    fake: &FakeProvider,
    route: &str,
    replies: Vec<FakeReply>,
) -> (
    Result<svc_application::ports::generation::GeneratedComponent, GenerationError>,
    usize,
) {
    let before = fake.request_count();
    for reply in replies {
        fake.push(reply);
    }
    let result = generator(fake, Flavour::Standard, fast_settings())
        .generate(&request_for(route, title_contract()))
        .await;
    (result, fake.request_count() - before)
}

#[tokio::test]
async fn every_provider_renders_through_the_pipeline() {
    let fake = FakeProvider::start().await;
    for (_, route) in providers(&fake) {
        let (result, calls) = generate_once(&fake, route, vec![FakeReply::component(GOOD)]).await;
        let component = result.unwrap_or_else(|e| panic!("{route}: {e}"));
        assert_eq!(component.source, GOOD.trim());
        assert_eq!(component.model.as_deref(), Some(route));
        assert_eq!(component.generator, "standard");
        assert_eq!(calls, 1);
    }
}

#[tokio::test]
async fn error_paths_map_to_documented_outcomes_with_bounded_retries() {
    let fake = FakeProvider::start().await;
    for (_, route) in providers(&fake) {
        // 401: no retry, NO_CREDENTIALS.
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![FakeReply::status(401, "{\"error\":{\"message\":\"bad key\"}}")],
        )
        .await;
        assert_eq!(result.unwrap_err().render_code(), "NO_CREDENTIALS", "{route}");
        assert_eq!(calls, 1, "{route}");

        // 429 with retry-after, then success: retried once after the asked wait.
        let started = std::time::Instant::now();
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![
                FakeReply::status(429, "{\"error\":{\"message\":\"slow down\"}}").with_header("retry-after", "1"),
                FakeReply::component(GOOD),
            ],
        )
        .await;
        assert!(result.is_ok(), "{route}: {result:?}");
        assert_eq!(calls, 2, "{route}");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{route}: retry-after not honoured"
        );

        // 429 asking for longer than the cap: fails at once as overloaded, with the hint.
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![FakeReply::status(429, "{}").with_header("retry-after", "120")],
        )
        .await;
        match result.unwrap_err() {
            GenerationError::Overloaded {
                retry_after_seconds, ..
            } => assert_eq!(retry_after_seconds, Some(120)),
            other => panic!("{route}: {other:?}"),
        }
        assert_eq!(calls, 1, "{route}");

        // 5xx three times: bounded retries, then PRODUCTION_FAILED.
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![
                FakeReply::status(503, "{}"),
                FakeReply::status(502, "{}"),
                FakeReply::status(500, "{}"),
            ],
        )
        .await;
        let error = result.unwrap_err();
        assert_eq!(error.render_code(), "PRODUCTION_FAILED", "{route}");
        assert!(error.to_string().contains("HTTP 500"), "{route}: {error}");
        assert_eq!(calls, 3, "{route}");

        // A 5xx then success.
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![FakeReply::status(503, "{}"), FakeReply::component(GOOD)],
        )
        .await;
        assert!(result.is_ok(), "{route}: {result:?}");
        assert_eq!(calls, 2, "{route}");

        // A malformed stream is not retried.
        let (result, calls) = generate_once(
            &fake,
            route,
            vec![FakeReply::Truncated {
                text: "```tsx\nexport".into(),
            }],
        )
        .await;
        assert_eq!(result.unwrap_err().render_code(), "PRODUCTION_FAILED", "{route}");
        assert_eq!(calls, 1, "{route}");
    }
}

#[tokio::test]
async fn a_silent_stream_times_out_is_retried_and_its_connection_closed() {
    let fake = FakeProvider::start().await;
    for (_, route) in providers(&fake) {
        let (result, calls) =
            generate_once(&fake, route, vec![FakeReply::Stall, FakeReply::Stall, FakeReply::Stall]).await;
        let error = result.unwrap_err();
        assert_eq!(error.render_code(), "PRODUCTION_FAILED", "{route}");
        assert!(error.to_string().contains("no stream data"), "{route}: {error}");
        assert_eq!(calls, 3, "{route}");
    }
    // Every abandoned reply body was dropped on the fake's side: the client hung up.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while fake.open_streams() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} streams still open",
            fake.open_streams()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_attempt_deadline_cancels_the_upstream_request() {
    let fake = FakeProvider::start().await;
    fake.set_chunk_delay(Duration::from_millis(100));
    fake.push(FakeReply::Text {
        text: "x".repeat(2000),
        chunk_chars: 10,
    });
    let settings = LlmSettings {
        attempt_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_secs(2),
        ..fast_settings()
    };
    let result = generator(&fake, Flavour::Standard, settings)
        .generate(&request_for("anthropic:claude-sonnet-4-5", title_contract()))
        .await;
    let error = result.unwrap_err();
    assert!(error.to_string().contains("no complete reply within"), "{error}");
    assert_eq!(fake.request_count(), 1, "a deadline is not retried");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while fake.open_streams() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the upstream stream was not closed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn missing_keys_are_no_credentials_or_no_platform_key() {
    let fake = FakeProvider::start().await;
    let mut configured: Vec<ProviderConfig> = providers(&fake).into_iter().map(|(p, _)| p).collect();
    configured[1].api_key = None;
    let some_keys = LlmGenerator::new(
        Flavour::Standard,
        configured.clone(),
        registry(),
        Arc::new(svc_compiler::OxcCompiler::new()),
        fast_settings(),
    );
    let error = some_keys
        .generate(&request_for("anthropic:claude-haiku-4-5", title_contract()))
        .await
        .unwrap_err();
    assert_eq!(error.render_code(), "NO_CREDENTIALS", "{error}");
    for provider in &mut configured {
        provider.api_key = None;
    }
    let no_keys = LlmGenerator::new(
        Flavour::Standard,
        configured,
        registry(),
        Arc::new(svc_compiler::OxcCompiler::new()),
        fast_settings(),
    );
    let error = no_keys
        .generate(&request_for("openai:gpt-4o", title_contract()))
        .await
        .unwrap_err();
    assert_eq!(error.render_code(), "NO_PLATFORM_KEY", "{error}");
    // A keyless local provider still works without any key.
    fake.push(FakeReply::component(GOOD));
    assert!(
        no_keys
            .generate(&request_for("ollama:llama3.1", title_contract()))
            .await
            .is_ok()
    );
    assert_eq!(fake.request_count(), 1, "no request leaves without a key");
}

// ---------------------------------------------------------------- repair and progress

#[derive(Default)]
struct Recorder(Mutex<Vec<GenerationProgress>>);

#[async_trait::async_trait]
impl ProgressSink for Recorder {
    async fn report(&self, progress: GenerationProgress) {
        self.0.lock().unwrap().push(progress);
    }
}

#[tokio::test]
async fn a_broken_reply_is_sent_back_once_with_the_findings_and_repaired() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(BROKEN));
    fake.push(FakeReply::component(GOOD));
    let recorder = Recorder::default();
    let component = generator(&fake, Flavour::Standard, fast_settings())
        .generate_with_progress(&request_for("google:gemini-2.5-pro", title_contract()), &recorder)
        .await
        .unwrap();
    assert_eq!(component.source, GOOD.trim());
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let turns = requests[1].body["contents"].as_array().unwrap().clone();
    assert_eq!(turns.len(), 3, "prompt, broken reply, repair request");
    assert_eq!(turns[1]["role"], "model");
    let repair = turns[2]["parts"][0]["text"].as_str().unwrap();
    assert!(repair.contains("`fetch` is not available"), "{repair}");
    assert!(repair.contains("no default export"), "{repair}");

    let stages: Vec<(GenerationStage, u32)> = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.stage, p.attempt))
        .collect();
    let first = |stage, attempt| {
        stages
            .iter()
            .position(|s| *s == (stage, attempt))
            .unwrap_or_else(|| panic!("{stage:?}/{attempt} in {stages:?}"))
    };
    assert!(first(GenerationStage::Prompting, 1) < first(GenerationStage::Streaming, 1));
    assert!(first(GenerationStage::Streaming, 1) < first(GenerationStage::Compiling, 1));
    assert!(first(GenerationStage::Compiling, 1) < first(GenerationStage::Repairing, 2));
    assert!(first(GenerationStage::Repairing, 2) < first(GenerationStage::Streaming, 2));
    assert!(first(GenerationStage::Streaming, 2) < first(GenerationStage::Compiling, 2));
    let repairing = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .find(|p| p.stage == GenerationStage::Repairing)
        .copied()
        .unwrap();
    assert_eq!(repairing.findings, Some(2));
}

#[tokio::test]
async fn two_broken_replies_fail_with_the_findings() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(BROKEN));
    fake.push(FakeReply::text("Sorry, I can only describe the card in words."));
    let error = generator(&fake, Flavour::Standard, fast_settings())
        .generate(&request_for("openai:gpt-4o", title_contract()))
        .await
        .unwrap_err();
    assert_eq!(error.render_code(), "PRODUCTION_FAILED");
    assert!(error.to_string().contains("no ```tsx code block"), "{error}");
    assert_eq!(fake.request_count(), 2, "exactly one repair round");
}

#[tokio::test]
async fn without_props_the_render_check_uses_the_least_props_the_contract_admits() {
    // `title` is required (synthesized as ""), `rows` optional (absent): a component guarding
    // the optional field renders; one mapping it unguarded is sent back with the error.
    let contract = json!({ "propsSpec": { "type": "object", "required": ["title"], "properties": {
        "title": { "type": "string" },
        "rows": { "type": "array", "items": { "type": "string" } } } } });
    let unguarded = "import { useProps } from \"@svc/gadgets\";\n\
        export default function Card() {\n\
          const { title, rows } = useProps<{ title: string; rows?: string[] }>();\n\
          return <ul title={title.toUpperCase()}>{rows!.map((r) => <li key={r}>{r}</li>)}</ul>;\n\
        }";
    let guarded = unguarded.replace("rows!.map", "(rows ?? []).map");
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(unguarded));
    fake.push(FakeReply::component(&guarded));
    let component = generator(&fake, Flavour::Standard, fast_settings())
        .generate(&request_for("openai:gpt-4.1-mini", contract))
        .await
        .unwrap();
    assert_eq!(component.source, guarded.trim());
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let repair = requests[1].body["messages"][3]["content"].as_str().unwrap();
    assert!(
        repair.contains("threw TypeError: cannot read property 'map' of undefined"),
        "{repair}"
    );
    assert!(repair.contains(r#"useProps() returned {"title":""}"#), "{repair}");
}

#[tokio::test]
async fn a_render_check_that_cannot_run_accepts_what_compiled() {
    struct Broken;
    impl RenderCheck for Broken {
        fn render(&self, _: &RenderCheckInput<'_>) -> Result<(), RenderCheckFailure> {
            Err(RenderCheckFailure::Unavailable("the engine failed to start".into()))
        }
    }
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(GOOD));
    let component = generator(&fake, Flavour::Standard, fast_settings())
        .with_render_check(Arc::new(Broken))
        .generate(&request_for("openai:gpt-4.1-mini", title_contract()))
        .await
        .unwrap();
    assert_eq!(component.source, GOOD.trim());
    assert_eq!(fake.request_count(), 1, "no repair round for the check's own fault");
}

#[tokio::test]
async fn the_advanced_generator_scores_and_repairs_a_weak_component() {
    let fake = FakeProvider::start().await;
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
                           "actionSpec": { "approve": { "schema": { "type": "object" } } } });
    // Compiles, but never sends `approve` and hard-codes a colour: score 2/4.
    let weak = "import { useProps } from \"@svc/gadgets\";\n\
        export default function Card() { const { title } = useProps<{ title: string }>();\n\
        return <h2 style={{ color: \"#ff0000\", background: \"var(--svc-color-bg)\" }}>{title}</h2>; }";
    let strong = "import { useProps, useAction } from \"@svc/gadgets\";\n\
        export default function Card() { const { title } = useProps<{ title: string }>();\n\
        const approve = useAction('approve');\n\
        return <button style={{ color: \"var(--svc-color-accent)\" }} onClick={() => approve({})}>{title}</button>; }";
    fake.push(FakeReply::component(weak));
    fake.push(FakeReply::component(strong));
    let component = generator(&fake, Flavour::Advanced, fast_settings())
        .generate(&request_for("openai:gpt-4.1", contract.clone()))
        .await
        .unwrap();
    assert_eq!(component.generator, "advanced");
    assert_eq!(component.validator_score, Some(1.0));
    assert_eq!(component.source, strong);
    let repair = fake.requests()[1].body["messages"][3]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(repair.contains("`approve` is never sent"), "{repair}");

    // A weak component that stays weak is still returned, with its (low) score.
    fake.push(FakeReply::component(weak));
    fake.push(FakeReply::component(weak));
    let component = generator(&fake, Flavour::Advanced, fast_settings())
        .generate(&request_for("openai:gpt-4.1", contract))
        .await
        .unwrap();
    assert_eq!(component.validator_score, Some(0.5));
}

#[tokio::test]
async fn a_request_without_a_model_needs_a_default() {
    let fake = FakeProvider::start().await;
    let request = GenerationRequest::new("card", title_contract());
    let error = generator(&fake, Flavour::Standard, fast_settings())
        .generate(&request)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("needs a model"), "{error}");
    fake.push(FakeReply::component(GOOD));
    let settings = LlmSettings {
        default_model: Some("ollama:llama3.1".into()),
        ..fast_settings()
    };
    let component = generator(&fake, Flavour::Standard, settings)
        .generate(&request)
        .await
        .unwrap();
    assert_eq!(component.model.as_deref(), Some("ollama:llama3.1"));
}

/// OpenAI's reasoning models refuse `max_tokens` and a temperature: their routes send
/// `max_completion_tokens` and no temperature, the other models keep both.
#[tokio::test]
async fn reasoning_routes_send_max_completion_tokens_and_no_temperature() {
    let fake = FakeProvider::start().await;
    for (route, reasoning) in [
        ("openai:gpt-5", true),
        ("openai:o4-mini", true),
        ("openai:gpt-4o", false),
    ] {
        let before = fake.request_count();
        fake.push(FakeReply::text(json!({ "tsx": GOOD }).to_string()));
        generator(&fake, Flavour::Standard, fast_settings())
            .generate(&request_for(route, title_contract()))
            .await
            .unwrap_or_else(|e| panic!("{route}: {e}"));
        let body = &fake.requests()[before].body;
        assert_eq!(body["max_completion_tokens"].is_u64(), reasoning, "{route}: {body}");
        assert_eq!(body.get("max_tokens").is_none(), reasoning, "{route}: {body}");
        assert_eq!(body.get("temperature").is_none(), reasoning, "{route}: {body}");
    }
}

#[tokio::test]
async fn providers_with_structured_output_are_asked_for_a_json_reply_and_it_is_read() {
    let fake = FakeProvider::start().await;
    let json_reply = FakeReply::text(json!({ "tsx": GOOD }).to_string());
    for (provider, route) in providers(&fake) {
        let before = fake.request_count();
        fake.push(if provider.wire == Wire::Anthropic {
            FakeReply::component(GOOD)
        } else {
            json_reply.clone()
        });
        let component = generator(&fake, Flavour::Standard, fast_settings())
            .generate(&request_for(route, title_contract()))
            .await
            .unwrap_or_else(|e| panic!("{route}: {e}"));
        assert_eq!(component.source, GOOD.trim(), "{route}");
        let body = &fake.requests()[before].body;
        let system = match provider.wire {
            Wire::OpenAi => {
                assert_eq!(body["response_format"]["type"], "json_schema", "{route}");
                assert_eq!(
                    body["response_format"]["json_schema"]["schema"]["required"],
                    json!(["tsx"])
                );
                body["messages"][0]["content"].clone()
            }
            Wire::Gemini => {
                assert_eq!(body["generationConfig"]["responseMimeType"], "application/json");
                assert_eq!(body["generationConfig"]["responseSchema"]["required"], json!(["tsx"]));
                body["systemInstruction"]["parts"][0]["text"].clone()
            }
            Wire::Ollama => {
                assert_eq!(body["format"]["required"], json!(["tsx"]));
                body["messages"][0]["content"].clone()
            }
            // No response schema in the Messages API: the fenced block it is.
            Wire::Anthropic => {
                assert!(body.get("response_format").is_none());
                assert!(body["system"].as_str().unwrap().contains("```tsx code block"));
                continue;
            }
        };
        assert!(system.as_str().unwrap().contains("{\"tsx\""), "{route}: {system}");
    }
    // Turned off in the settings: a plain fenced request.
    fake.push(FakeReply::component(GOOD));
    let settings = LlmSettings {
        structured_output: false,
        ..fast_settings()
    };
    generator(&fake, Flavour::Standard, settings)
        .generate(&request_for("openai:gpt-4o", title_contract()))
        .await
        .unwrap();
    assert!(fake.requests().last().unwrap().body.get("response_format").is_none());
}

#[tokio::test]
async fn frames_split_across_network_chunks_decode_the_same() {
    let fake = FakeProvider::start().await;
    fake.set_chunk_delay(Duration::from_millis(1));
    let expected = fixture("expected_reply.txt");
    let recordings = [
        ("openai_stream.sse", "text/event-stream"),
        ("anthropic_stream.sse", "text/event-stream"),
        ("gemini_stream.sse", "text/event-stream"),
        ("ollama_stream.ndjson", "application/x-ndjson"),
    ];
    for ((provider, route), (file, content_type)) in providers(&fake).into_iter().zip(recordings) {
        // 7-character pieces cut through field names, JSON strings, CRLF pairs and newlines.
        let chars: Vec<char> = fixture(file).chars().collect();
        fake.push(FakeReply::Raw {
            content_type: content_type.into(),
            chunks: chars.chunks(7).map(|c| c.iter().collect()).collect(),
        });
        let model = route.split_once(':').unwrap().1;
        let text = collect(&provider, &chat(model))
            .await
            .unwrap_or_else(|e| panic!("{route}: {e}"));
        assert_eq!(text, expected, "{route}");
    }
}
