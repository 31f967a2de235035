//! Generation by a language model, black-box: a real server whose `openai` provider points at a
//! loopback fake speaking OpenAI's streaming Chat Completions. A render naming `infra.model` goes
//! through the LLM pipeline, reports its stages on `_svc:lifecycle`, repairs a broken first reply
//! once, fails with the documented codes, and frees its queue slot when the upstream times out.

use std::time::Duration;

use serde_json::{Value, json};
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp};

const MODEL: &str = "openai:gpt-4.1-mini";

const GOOD: &str = "import { useProps, useAction } from \"@svc/gadgets\";\n\
export default function Card() {\n\
  const { title } = useProps<{ title: string }>();\n\
  const approve = useAction(\"approve\");\n\
  return <button style={{ color: \"var(--svc-color-accent)\" }} onClick={() => approve({})}>{title}</button>;\n\
}";

const BROKEN: &str = "export function Card() {\n\
  const saved = localStorage.getItem(\"title\");\n\
  return <h2>{saved}</h2>;\n\
}";

/// Compiles, but `lines` is not among the props: rendering throws a TypeError.
const THROWS_AT_RENDER: &str = "import { useProps } from \"@svc/gadgets\";\n\
export default function Card() {\n\
  const props = useProps<{ title: string; lines: { sku: string }[] }>();\n\
  return <ul>{props.lines.map((line) => <li key={line.sku}>{line.sku}</li>)}</ul>;\n\
}";

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    })
}

/// A server whose providers all point at `fake`; only `openai` has a key unless `keys` is false.
async fn server(name: &str, fake: &FakeProvider, keys: bool, configure: impl FnOnce(&mut svc::Settings)) -> TestApp {
    server_on(Backend::Sqlite, name, fake, keys, configure).await.unwrap()
}

/// Like [`server`] on `backend`; `None` when PostgreSQL is not configured.
async fn server_on(
    backend: Backend,
    name: &str,
    fake: &FakeProvider,
    keys: bool,
    configure: impl FnOnce(&mut svc::Settings),
) -> Option<TestApp> {
    TestApp::spawn_configured(name, backend, Auth::DevAllowAll, |s| {
        let g = &mut s.generation;
        for provider in g.providers.values_mut() {
            provider.api_key_env = "SVC_TEST_UNSET_KEY_VARIABLE".into();
            provider.api_key = String::new();
        }
        let openai = g.providers.get_mut("openai").unwrap();
        openai.base_url = format!("{}/v1", fake.base_url);
        if keys {
            openai.api_key = "sk-test".into();
        }
        g.idle_timeout_seconds = 30;
        configure(s);
    })
    .await
}

async fn handshake(app: &TestApp, intent: &str) -> String {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    hs["handshakeId"].as_str().unwrap().to_owned()
}

fn render_args(handshake_id: &str) -> Value {
    json!({ "handshakeId": handshake_id, "props": { "title": "Order 42" }, "infra": { "model": MODEL } })
}

/// The `_svc:lifecycle` payloads of a rendered session, replayed from the start.
async fn lifecycle(app: &TestApp, slice: &Value) -> Vec<Value> {
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"], "fromSeq": 0 }),
    )
    .await;
    ws.expect("ack").await;
    let mut payloads = vec![];
    while let Some(frame) = ws.try_recv(Duration::from_millis(500)).await {
        if frame["type"] == "data" && frame["payload"]["channel"] == "_svc:lifecycle" {
            payloads.push(frame["payload"]["payload"].clone());
        }
    }
    payloads
}

fn stages(payloads: &[Value]) -> Vec<String> {
    payloads
        .iter()
        .map(|p| p["stage"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_naming_a_model_is_generated_by_it_and_reports_its_stages() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        rendered_by_the_model(backend).await;
    }
}

async fn rendered_by_the_model(backend: Backend) {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(GOOD));
    let Some(app) = server_on(backend, "llm_render", &fake, true, |_| {}).await else {
        return;
    };
    let handshake_id = handshake(&app, "order approval").await;
    let body = app.call("svc_render", render_args(&handshake_id)).await;
    let result = &body["result"]["structuredContent"];
    assert_eq!(result["outcome"], "rendered", "{body}");

    // The model wrote the card the agent can read back.
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": result["sessionId"] }))
        .await;
    assert_eq!(source["blueprint"]["source"], GOOD);

    // The provider got a streaming request for that model, with the contract in the prompt.
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].credential.as_deref(), Some("Bearer sk-test"));
    assert_eq!(requests[0].body["model"], "gpt-4.1-mini");
    assert_eq!(requests[0].body["stream"], true);
    // The registry says the model supports structured output: the reply is schema-constrained.
    assert_eq!(requests[0].body["response_format"]["type"], "json_schema");
    let prompt = requests[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("order approval") && prompt.contains("\"approve\""),
        "{prompt}"
    );

    let slice = &body["result"]["_meta"]["ai.svc/render"];
    let payloads = lifecycle(&app, slice).await;
    assert_eq!(
        stages(&payloads),
        ["queued", "prompting", "streaming", "compiling", "done"],
        "{payloads:?}"
    );
    assert!(payloads[0]["waitedMs"].is_u64());
    assert!(payloads[2]["receivedChars"].as_u64().unwrap() > 0);
    assert_eq!(payloads[4]["outcome"], "rendered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_round_turns_a_broken_reply_into_a_rendered_card() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        repaired(backend).await;
    }
}

async fn repaired(backend: Backend) {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(BROKEN));
    fake.push(FakeReply::component(GOOD));
    let Some(app) = server_on(backend, "llm_repair", &fake, true, |_| {}).await else {
        return;
    };
    let handshake_id = handshake(&app, "order approval").await;
    let body = app.call("svc_render", render_args(&handshake_id)).await;
    let result = &body["result"]["structuredContent"];
    assert_eq!(result["outcome"], "rendered", "{body}");
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": result["sessionId"] }))
        .await;
    assert_eq!(source["blueprint"]["source"], GOOD);

    // The second request carried the broken reply and the compiler's findings.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    let repair = messages[3]["content"].as_str().unwrap();
    assert!(repair.contains("`localStorage` is not available"), "{repair}");
    assert!(repair.contains("no default export"), "{repair}");

    let payloads = lifecycle(&app, &body["result"]["_meta"]["ai.svc/render"]).await;
    let stages = stages(&payloads);
    let repairing = stages.iter().position(|s| s == "repairing").expect("a repairing stage");
    assert_eq!(payloads[repairing]["attempt"], 2);
    assert_eq!(payloads[repairing]["findings"], 2);
    assert!(stages[repairing + 1..].contains(&"streaming".to_owned()), "{stages:?}");
    assert_eq!(stages.last().unwrap(), "done");
}

/// A component that still fails the checks after the repair round is `VALIDATION_ERROR`
/// (docs/generation.md): generation produced code, the code did not validate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_broken_twice_fails_with_validation_error_and_the_findings() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        broken_twice(backend).await;
    }
}

async fn broken_twice(backend: Backend) {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(BROKEN));
    fake.push(FakeReply::component(BROKEN));
    let Some(app) = server_on(backend, "llm_broken", &fake, true, |_| {}).await else {
        return;
    };
    let handshake_id = handshake(&app, "order approval").await;
    let failed = failed_render(&app, &handshake_id).await;
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "VALIDATION_ERROR");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("`localStorage` is not available"), "{message}");
    assert!(failed.get("resourceUri").is_none());
    assert_eq!(fake.request_count(), 2, "exactly one repair round");
    failed_session_answers(&app, &failed).await;
}

/// A render that fails: an error result with no `_meta` (Document 1); its structured content.
async fn failed_render(app: &TestApp, handshake_id: &str) -> Value {
    let body = app.call("svc_render", render_args(handshake_id)).await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert!(
        body["result"].get("_meta").is_none(),
        "a failed render has no _meta: {body}"
    );
    body["result"]["structuredContent"].clone()
}

/// What Document 1 says an error session answers: its render resource keeps the failure message
/// (-32006 `NOT_MOUNTABLE`), and it takes no gestures (`svc_consume` reads `expired`).
async fn failed_session_answers(app: &svc_tests::TestApp, failed: &Value) {
    let session_id = failed["sessionId"]
        .as_str()
        .expect("a failed render returns its sessionId");
    let (status, read) = app
        .rpc(
            "resources/read",
            json!({ "uri": format!("ui://svc/render/{session_id}") }),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(read["error"]["code"], -32006, "{read}");
    assert_eq!(read["error"]["data"]["code"], "NOT_MOUNTABLE", "{read}");
    assert_eq!(read["error"]["data"]["message"], failed["error"]["message"], "{read}");
    let consumed = app
        .tool_ok("svc_consume", json!({ "sessionId": session_id, "timeout": 0 }))
        .await;
    assert_eq!(consumed["status"], "expired", "{consumed}");
    assert_eq!(consumed["events"], json!([]));
}

/// A last reply with no component at all is `PRODUCTION_FAILED`: nothing was produced to validate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_reply_without_a_component_fails_with_production_failed() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        no_component(backend).await;
    }
}

async fn no_component(backend: Backend) {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(BROKEN));
    fake.push(FakeReply::text("Sorry, I can only describe the card in words."));
    let Some(app) = server_on(backend, "llm_no_component", &fake, true, |_| {}).await else {
        return;
    };
    let handshake_id = handshake(&app, "order approval").await;
    let failed = app.tool_error_result("svc_render", render_args(&handshake_id)).await;
    assert_eq!(failed["error"]["code"], "PRODUCTION_FAILED", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no ```tsx code block"),
        "{failed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_throws_when_rendered_is_repaired_with_the_error() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(THROWS_AT_RENDER));
    fake.push(FakeReply::component(GOOD));
    let app = server("llm_render_throws", &fake, true, |_| {}).await;
    let handshake_id = handshake(&app, "order approval").await;
    let body = app.call("svc_render", render_args(&handshake_id)).await;
    let result = &body["result"]["structuredContent"];
    assert_eq!(result["outcome"], "rendered", "{body}");
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": result["sessionId"] }))
        .await;
    assert_eq!(source["blueprint"]["source"], GOOD);

    // The repair turn quotes what rendering with the render's own props threw.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let repair = requests[1].body["messages"][3]["content"].as_str().unwrap();
    assert!(
        repair.contains("rendering the component against the fixture props threw TypeError"),
        "{repair}"
    );
    assert!(repair.contains("cannot read property 'map' of undefined"), "{repair}");
    assert!(
        repair.contains(r#"useProps() returned {"title":"Order 42"}"#),
        "{repair}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_throws_when_rendered_twice_fails_with_the_error() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::component(THROWS_AT_RENDER));
    fake.push(FakeReply::component(THROWS_AT_RENDER));
    let app = server("llm_render_throws_twice", &fake, true, |_| {}).await;
    let handshake_id = handshake(&app, "order approval").await;
    let failed = failed_render(&app, &handshake_id).await;
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "VALIDATION_ERROR");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("threw TypeError: cannot read property 'map' of undefined"),
        "{message}"
    );
    assert_eq!(fake.request_count(), 2, "exactly one repair round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_keys_fail_with_no_platform_key_or_no_credentials() {
    let fake = FakeProvider::start().await;
    let app = server("llm_no_keys", &fake, false, |_| {}).await;
    let failed = app
        .tool_error_result("svc_render", render_args(&handshake(&app, "card").await))
        .await;
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "NO_PLATFORM_KEY", "{failed}");

    let app = server("llm_other_key", &fake, false, |s| {
        s.generation.providers.get_mut("anthropic").unwrap().api_key = "sk-ant".into();
    })
    .await;
    let failed = app
        .tool_error_result("svc_render", render_args(&handshake(&app, "card").await))
        .await;
    assert_eq!(failed["error"]["code"], "NO_CREDENTIALS", "{failed}");
    assert_eq!(fake.request_count(), 0, "nothing was sent without a key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_keeps_rate_limiting_fails_as_overloaded() {
    let fake = FakeProvider::start().await;
    fake.set_default(
        FakeReply::status(429, "{\"error\":{\"message\":\"Rate limit reached\"}}").with_header("retry-after", "0"),
    );
    let app = server("llm_429", &fake, true, |s| s.generation.max_attempts = 2).await;
    let failed = app
        .tool_error_result("svc_render", render_args(&handshake(&app, "card").await))
        .await;
    assert_eq!(failed["error"]["code"], "GENERATION_QUEUE_OVERLOADED", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Rate limit reached")
    );
    assert_eq!(fake.request_count(), 2, "retried once, then gave up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timed_out_upstream_request_frees_its_slot_and_its_connection() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::Stall);
    fake.push(FakeReply::component(GOOD));
    let app = server("llm_timeout", &fake, true, |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
        s.generation.idle_timeout_seconds = 1;
        s.generation.max_attempts = 1;
    })
    .await;
    let (first, second) = (handshake(&app, "first").await, handshake(&app, "second").await);
    let stalled = {
        let args = render_args(&first);
        let (client, url) = (app.client.clone(), app.mcp_url());
        tokio::spawn(async move {
            let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": { "name": "svc_render", "arguments": args } });
            let reply: Value = client
                .post(url)
                .bearer_auth("dev")
                .json(&call)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            reply
        })
    };
    fake.wait_for_requests(1).await;

    // While the stalled generation holds the only slot, another cold render is refused.
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "svc_render", "arguments": render_args(&second) } });
    let refused = app
        .client
        .post(app.mcp_url())
        .bearer_auth("dev")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(refused.json::<Value>().await.unwrap()["error"]["code"], -32014);

    // The silent stream times out: the render fails, its upstream connection is closed...
    let reply = stalled.await.unwrap();
    let failed = &reply["result"]["structuredContent"];
    assert_eq!(failed["outcome"], "failed", "{reply}");
    assert_eq!(failed["error"]["code"], "PRODUCTION_FAILED");
    assert!(
        failed["error"]["message"].as_str().unwrap().contains("no stream data"),
        "{reply}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while fake.open_streams() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the timed-out upstream request was not closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...and the freed slot serves the refused render's handshake, which stayed intact.
    let rendered = app.tool_ok("svc_render", render_args(&second)).await;
    assert_eq!(rendered["outcome"], "rendered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handshakes_generator_slug_picks_the_generator() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let app = server("llm_slugs", &fake, true, |_| {}).await;
    let with_slug = |intent: &str, slug: &str| json!({ "intent": intent, "blueprintDraft": { "contract": contract(), "generator": slug }, "forceCreate": true });
    // `builtin` named explicitly wins over a model: no provider call.
    let hs = app.tool_ok("svc_handshake", with_slug("builtin card", "builtin")).await;
    let rendered = app
        .tool_ok("svc_render", render_args(hs["handshakeId"].as_str().unwrap()))
        .await;
    assert_eq!(rendered["outcome"], "rendered");
    assert_eq!(fake.request_count(), 0);
    // `advanced` goes to the model.
    let hs = app
        .tool_ok("svc_handshake", with_slug("advanced card", "advanced"))
        .await;
    let rendered = app
        .tool_ok("svc_render", render_args(hs["handshakeId"].as_str().unwrap()))
        .await;
    assert_eq!(rendered["outcome"], "rendered");
    assert_eq!(fake.request_count(), 1);
    // An unknown slug fails the render, naming it.
    let hs = app.tool_ok("svc_handshake", with_slug("deluxe card", "deluxe")).await;
    let failed = app
        .tool_error_result("svc_render", render_args(hs["handshakeId"].as_str().unwrap()))
        .await;
    assert_eq!(failed["error"]["code"], "PRODUCTION_FAILED", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown generator `deluxe`"),
        "{failed}"
    );
}
