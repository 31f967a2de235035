//! The repair round, the render check and the generators' progress.

use super::*;

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
    let request = GenerationRequest::new("card", title_contract().try_into().unwrap());
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
