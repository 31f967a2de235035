//! Public-demo mode (`--public-demo`, Document 2 Limits): cold generations per remote address in a
//! fixed window. The render over the limit is a returned refusal (Document 1: outcome `refused`,
//! code `issuer_rate_limited`, handshake intact); cache hits are not generations.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

/// A demo server allowing `generations` cold generations per `window_seconds`.
async fn demo(test: &str, generations: u32, window_seconds: u64) -> TestApp {
    TestApp::spawn_configured(test, Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.public_demo.enabled = true;
        s.public_demo.generations_per_window = generations;
        s.public_demo.window_seconds = window_seconds;
    })
    .await
    .unwrap()
}

async fn handshake(app: &TestApp, intent: &str) -> String {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": {} } }),
        )
        .await;
    hs["handshakeId"].as_str().unwrap().to_owned()
}

/// `svc_render` of a handshake; returns the JSON-RPC `result`.
async fn render(app: &TestApp, handshake_id: &str) -> Value {
    let body = app
        .call("svc_render", json!({ "handshakeId": handshake_id, "props": {} }))
        .await;
    assert!(
        body["result"].is_object(),
        "a tool result, not a JSON-RPC error: {body}"
    );
    body["result"].clone()
}

async fn cold_render(app: &TestApp, intent: &str) -> Value {
    let id = handshake(app, intent).await;
    let result = render(app, &id).await;
    let content = &result["structuredContent"];
    assert_eq!(content["outcome"], "rendered", "{result}");
    assert_eq!(content["cache"]["hit"], false, "a cold generation: {result}");
    content.clone()
}

fn assert_refused(result: &Value) {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("_meta").is_none(), "a refusal carries no _meta: {result}");
    let content = result["structuredContent"].as_object().unwrap();
    let keys: Vec<&str> = content.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 2, "only outcome and refusal: {result}");
    assert_eq!(content["outcome"], "refused");
    let refusal = &content["refusal"];
    assert_eq!(refusal["code"], "issuer_rate_limited", "{result}");
    assert_eq!(refusal["retry"], "next-period");
    assert_eq!(refusal["handshake"], "intact");
    assert!(refusal["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(refusal["fix"].as_str().is_some_and(|f| !f.is_empty()));
    assert_eq!(refusal.as_object().unwrap().len(), 5, "{refusal}");
}

const INTENTS: [&str; 4] = [
    "weather forecast for the week",
    "stock portfolio ticker",
    "kitchen recipe steps",
    "flight boarding pass",
];

#[tokio::test]
async fn the_generation_over_the_window_is_refused_but_cache_hits_still_render() {
    let app = demo("demo_limit", 3, 600).await;
    let first = cold_render(&app, INTENTS[0]).await;
    for intent in &INTENTS[1..3] {
        cold_render(&app, intent).await;
    }
    let fourth = handshake(&app, INTENTS[3]).await;
    assert_refused(&render(&app, &fourth).await);

    // X-Forwarded-For is not trusted by default: a forged address buys no new window.
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": "svc_render", "arguments": { "handshakeId": fourth, "props": {} } } });
    let forged: Value = app
        .client
        .post(app.mcp_url())
        .bearer_auth(&app.bearer)
        .header("x-forwarded-for", "198.51.100.77")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_refused(&forged["result"]);

    // A cache hit runs no generation: it renders inside the spent window.
    let reuse = handshake(&app, INTENTS[0]).await;
    let hit = render(&app, &reuse).await;
    assert_eq!(hit["structuredContent"]["outcome"], "rendered", "{hit}");
    assert_eq!(hit["structuredContent"]["cache"]["hit"], true);
    assert_eq!(hit["structuredContent"]["blueprintId"], first["blueprintId"]);
}

#[tokio::test]
async fn the_refused_handshake_renders_once_the_window_ends() {
    // Long enough for two debug-build renders on a loaded 2-core machine to fall inside it.
    let window = Duration::from_secs(8);
    let app = demo("demo_window", 1, window.as_secs()).await;
    // Both handshakes first, so the second render follows the first at once.
    let first = handshake(&app, INTENTS[0]).await;
    let second = handshake(&app, INTENTS[1]).await;
    let opened = Instant::now();
    assert_eq!(render(&app, &first).await["structuredContent"]["outcome"], "rendered");
    assert_refused(&render(&app, &second).await);
    assert!(opened.elapsed() < window, "the refusal came inside the window");

    tokio::time::sleep(window.saturating_sub(opened.elapsed())).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let result = render(&app, &second).await;
        match result["structuredContent"]["outcome"].as_str() {
            Some("rendered") => break,
            Some("refused") if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            _ => panic!("the same handshake should render after the window: {result}"),
        }
    }
}

#[tokio::test]
async fn without_public_demo_generations_are_unlimited() {
    let app = TestApp::spawn_configured("demo_off", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.public_demo.generations_per_window = 1;
        s.public_demo.window_seconds = 600;
    })
    .await
    .unwrap();
    for intent in INTENTS {
        cold_render(&app, intent).await;
    }
}

/// A generation the queue turns away (503) never ran, so it does not count: with two generations
/// per window and one queue slot, a render refused while the slot is held leaves room for the
/// second generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_render_the_queue_turns_away_does_not_count() {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};

    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(
        "export default function Card() { return <p style={{ color: 'var(--svc-color-fg)' }}>ok</p>; }",
    ));
    fake.pause();
    let base = format!("{}/v1", fake.base_url);
    let app = TestApp::spawn_configured("demo_queue", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.public_demo.enabled = true;
        s.public_demo.generations_per_window = 2;
        s.public_demo.window_seconds = 600;
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
        let openai = s.generation.providers.get_mut("openai").unwrap();
        openai.base_url = base;
        openai.api_key = "sk-test".into();
    })
    .await
    .unwrap();
    let mut handshakes = vec![];
    for intent in INTENTS {
        handshakes.push(handshake(&app, intent).await);
    }
    let raw_render = |handshake_id: &str| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_render",
                           "arguments": { "handshakeId": handshake_id, "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } } } });
        let request = app
            .client
            .post(app.mcp_url())
            .bearer_auth(&app.bearer)
            .json(&body)
            .send();
        async move {
            let response = request.await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    // The first generation holds the only slot at the paused provider.
    let first = tokio::spawn(raw_render(&handshakes[0]));
    fake.wait_for_requests(1).await;
    let (status, body) = raw_render(&handshakes[1]).await;
    assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], -32014);
    fake.resume();
    let (status, body) = first.await.unwrap();
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");

    // One generation counted so far: the turned-away render's handshake is the second.
    let (_, body) = raw_render(&handshakes[1]).await;
    assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    let (_, body) = raw_render(&handshakes[2]).await;
    assert_refused(&body["result"]);
}
