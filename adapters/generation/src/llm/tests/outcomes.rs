//! How provider failures map to documented outcomes, with bounded retries and deadlines.

use super::*;

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
