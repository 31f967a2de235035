//! What each provider adapter sends and how it decodes what comes back.

use super::*;

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
