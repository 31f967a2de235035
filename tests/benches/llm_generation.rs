//! Generation through the language-model pipeline against the loopback fake provider (OpenAI
//! wire format, streamed): the queue's own cost per generation, cold renders with the built-in
//! generator and with the LLM pipeline, and the time from the render request to the first
//! `_svc:lifecycle` frame. Every handshake sets `forceCreate`, so no render is served from the
//! blueprint cache (similar intents would otherwise match semantically).
//!
//! Run: `cargo bench -p svc-tests --bench llm_generation` (release profile). Figures go to
//! BENCHMARKS.md with the machine and date. Medians and ratios only: this machine is noisy.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_application::services::agent::GenerationQueue;
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp};

const WARMUP: usize = 30;
const SAMPLES: usize = 300;
const QUEUE_OPS: usize = 200_000;

const COMPONENT: &str = "import { useProps, useAction } from \"@svc/gadgets\";\n\
export default function Card() {\n\
  const { title } = useProps<{ title: string }>();\n\
  const approve = useAction(\"approve\");\n\
  return <button style={{ color: \"var(--svc-color-accent)\" }} onClick={() => approve({})}>{title}</button>;\n\
}";

fn pick(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}

fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    let (p50, p90, p99) = (
        pick(&mut samples, 0.5),
        pick(&mut samples, 0.9),
        pick(&mut samples, 0.99),
    );
    println!(
        "{name:<46} p50 {:>9.1} µs   p90 {:>9.1} µs   p99 {:>9.1} µs",
        us(p50),
        us(p90),
        us(p99)
    );
    p50
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

async fn rpc(client: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    client
        .post(url)
        .bearer_auth("bench")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Timing of one cold render.
struct Cold {
    total: Duration,
    /// Request sent to the first `_svc:lifecycle` envelope's server timestamp (ms resolution).
    first_frame: Duration,
    /// Request sent to the fake provider reading the model call (µs resolution); the `queued`
    /// and `prompting` frames are stored before it, so it bounds the first frame from above.
    provider_reached: Option<Duration>,
}

async fn cold_render(
    app: &TestApp,
    client: &reqwest::Client,
    fake: &FakeProvider,
    n: usize,
    model: Option<&str>,
) -> Cold {
    let url = app.mcp_url();
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    });
    let hs = rpc(
        client,
        &url,
        "svc_handshake",
        json!({ "intent": format!("bench card {n}"), "blueprintDraft": { "contract": contract }, "forceCreate": true }),
    )
    .await;
    let mut args =
        json!({ "handshakeId": hs["result"]["structuredContent"]["handshakeId"], "props": { "title": "x" } });
    if let Some(model) = model {
        args["infra"] = json!({ "model": model });
    }
    let wall = chrono::Utc::now();
    let started = Instant::now();
    let reply = rpc(client, &url, "svc_render", args).await;
    let total = started.elapsed();
    assert_eq!(reply["result"]["structuredContent"]["outcome"], "rendered", "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["cache"]["hit"], false,
        "a cold render"
    );
    let provider_reached = model.and_then(|_| fake.requests().last().map(|r| r.received_at.duration_since(started)));

    let slice = &reply["result"]["_meta"]["ai.svc/render"];
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"], "fromSeq": 0 }),
    )
    .await;
    ws.expect("ack").await;
    let first = loop {
        let frame = ws.recv().await;
        if frame["type"] == "data" && frame["payload"]["channel"] == "_svc:lifecycle" {
            break frame;
        }
    };
    let stamped = chrono::DateTime::parse_from_rfc3339(first["payload"]["timestamp"].as_str().unwrap()).unwrap();
    // Both clocks are the same machine's; the envelope keeps milliseconds, so clamp at zero.
    let first_frame = (stamped.with_timezone(&chrono::Utc) - wall)
        .to_std()
        .unwrap_or(Duration::ZERO);
    Cold {
        total,
        first_frame,
        provider_reached,
    }
}

#[tokio::main]
async fn main() {
    // The queue's own cost: an uncontended enter and release, in process.
    let queue = GenerationQueue::new(4, 16, Duration::from_secs(30));
    let mut batches = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        for _ in 0..QUEUE_OPS / 20 {
            drop(queue.enter("bench").await.unwrap());
        }
        batches.push(started.elapsed() / (QUEUE_OPS as u32 / 20));
    }
    println!(
        "generation queue enter + release, uncontended: p50 {:.0} ns per generation",
        pick(&mut batches, 0.5).as_secs_f64() * 1e9
    );

    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(COMPONENT));
    let base = format!("{}/v1", fake.base_url);
    let app = TestApp::spawn_configured("bench_llm", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        let openai = s.generation.providers.get_mut("openai").unwrap();
        openai.base_url = base;
        openai.api_key = "sk-bench".into();
        s.generation.concurrency = 4;
    })
    .await
    .unwrap();
    let client = reqwest::Client::new();
    println!(
        "loopback, sequential cold renders (distinct intents, interleaved), {SAMPLES} samples each after {WARMUP} warm-up, SQLite"
    );

    // Interleaved, so load from elsewhere on the machine falls on both alike.
    let (mut builtin, mut llm) = (Vec::new(), Vec::new());
    for n in 0..WARMUP + SAMPLES {
        let plain = cold_render(&app, &client, &fake, n, None).await;
        let modelled = cold_render(&app, &client, &fake, 10_000 + n, Some("openai:gpt-4.1-mini")).await;
        if n >= WARMUP {
            builtin.push(plain);
            llm.push(modelled);
        }
    }
    let builtin_total = report(
        "cold render, builtin generator",
        builtin.iter().map(|c| c.total).collect(),
    );
    let llm_total = report(
        "cold render, LLM pipeline via the fake (OpenAI SSE)",
        llm.iter().map(|c| c.total).collect(),
    );
    report(
        "  request -> fake provider reached",
        llm.iter().filter_map(|c| c.provider_reached).collect(),
    );
    report(
        "request -> first _svc:lifecycle frame, builtin (ms res.)",
        builtin.iter().map(|c| c.first_frame).collect(),
    );
    report(
        "request -> first _svc:lifecycle frame, LLM (ms res.)",
        llm.iter().map(|c| c.first_frame).collect(),
    );
    println!(
        "LLM cold render / builtin cold render p50: {:.2}x",
        us(llm_total) / us(builtin_total)
    );
}
