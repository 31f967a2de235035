//! Hostile providers: endless lines, replies without end, error bodies of gigabytes. Each is
//! refused at its documented bound, and the fake counts what the client read before hanging up.

use super::*;
use crate::llm::framing::{MAX_FRAME_BYTES, MAX_OUTPUT_TOKENS, max_reply_bytes};

/// What a hostile provider offers: far more than any bound.
const FLOOD_BYTES: usize = 64 << 20;
/// What a client that stopped at its bound may still have taken off the wire: its bound plus
/// what loopback socket buffers and the HTTP stack hold.
const READ_SLACK: usize = 16 << 20;

fn flood(status: u16, content_type: &str, prefix: &str, chunk: String, suffix: &str) -> FakeReply {
    FakeReply::Flood {
        status,
        content_type: content_type.into(),
        prefix: prefix.into(),
        chunk,
        total_bytes: FLOOD_BYTES,
        suffix: suffix.into(),
    }
}

#[tokio::test]
async fn an_endless_line_is_refused_at_the_frame_bound_on_every_wire() {
    let fake = FakeProvider::start().await;
    for (provider, route) in providers(&fake) {
        let (content_type, prefix) = if provider.wire == Wire::Ollama {
            ("application/x-ndjson", "{\"message\":{\"content\":\"")
        } else {
            ("text/event-stream", "data: ")
        };
        let before = fake.sent_bytes();
        fake.push(flood(200, content_type, prefix, "a".repeat(64 << 10), ""));
        let model = route.split_once(':').unwrap().1;
        let error = collect(&provider, &chat(model)).await.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Malformed, "{route}: {error}");
        assert_eq!(
            error.message,
            format!("a stream frame is longer than {MAX_FRAME_BYTES} bytes"),
            "{route}"
        );
        fake.wait_for_closed_streams().await;
        let read = fake.sent_bytes() - before;
        assert!(read < MAX_FRAME_BYTES + READ_SLACK, "{route}: {read} bytes read");
    }
}

#[tokio::test]
async fn an_event_of_many_data_lines_is_bounded_too() {
    let fake = FakeProvider::start().await;
    let (provider, route) = providers(&fake).remove(0);
    // Short lines, but one event that never ends.
    fake.push(flood(
        200,
        "text/event-stream",
        "",
        format!("data: {}\n", "a".repeat(1000)),
        "",
    ));
    let model = route.split_once(':').unwrap().1;
    let error = collect(&provider, &chat(model)).await.unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Malformed, "{error}");
    assert_eq!(
        error.message,
        format!("a stream frame is longer than {MAX_FRAME_BYTES} bytes")
    );
}

#[tokio::test]
async fn a_reply_larger_than_its_bound_is_refused() {
    let fake = FakeProvider::start().await;
    let (provider, route) = providers(&fake).remove(0);
    let request = chat(route.split_once(':').unwrap().1);
    // Well-formed deltas, and the end marker after 64 MiB of them.
    let delta = json!({ "choices": [{ "index": 0, "delta": { "content": "a".repeat(32 << 10) } }] });
    fake.push(flood(
        200,
        "text/event-stream",
        "",
        format!("data: {delta}\n\n"),
        "data: [DONE]\n\n",
    ));
    let error = collect(&provider, &request).await.unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::Malformed, "{error}");
    let limit = max_reply_bytes(request.max_output_tokens);
    assert_eq!(error.message, format!("the reply is larger than {limit} bytes"));
    fake.wait_for_closed_streams().await;
    assert!(
        fake.sent_bytes() < limit as usize + READ_SLACK,
        "{} bytes read",
        fake.sent_bytes()
    );
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_to_its_bound() {
    let fake = FakeProvider::start().await;
    for (provider, route) in providers(&fake) {
        let before = fake.sent_bytes();
        fake.push(flood(
            500,
            "application/json",
            "{\"error\":{\"message\":\"",
            "x".repeat(64 << 10),
            "\"}}",
        ));
        let model = route.split_once(':').unwrap().1;
        let error = collect(&provider, &chat(model)).await.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Unavailable, "{route}: {error}");
        assert_eq!(error.status, Some(500), "{route}");
        fake.wait_for_closed_streams().await;
        let read = fake.sent_bytes() - before;
        assert!(read < READ_SLACK, "{route}: {read} bytes of the error body read");
    }
}

/// Settings built in code skip the start-up check of `generation.max_output_tokens`: a budget
/// above the cap is lowered to it, so the provider is asked for at most the cap and a reply may
/// be no longer than the cap allows (128 MiB), however large the model's context.
#[tokio::test]
async fn the_output_tokens_asked_and_the_reply_limit_stop_at_the_cap() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::text(json!({ "tsx": GOOD }).to_string()));
    let settings = LlmSettings {
        max_output_tokens: u32::MAX,
        ..fast_settings()
    };
    // A context of 1,047,576 tokens: the cap, not the context, bounds the request.
    generator(&fake, Flavour::Standard, settings)
        .generate(&request_for("openai:gpt-4.1-mini", title_contract()))
        .await
        .unwrap();
    assert_eq!(fake.requests()[0].body["max_tokens"], MAX_OUTPUT_TOKENS);
    assert_eq!(max_reply_bytes(MAX_OUTPUT_TOKENS), 128 << 20);
    assert_eq!(max_reply_bytes(u32::MAX), max_reply_bytes(MAX_OUTPUT_TOKENS));
}
