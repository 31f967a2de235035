//! Loopback latency of the warm reuse path (handshake + render of a cached blueprint) and of
//! `svc_consume` with timeout 0, against a poem hello-world endpoint measured in the same run.
//!
//! Run: `cargo bench -p svc-tests --bench agent_paths` (release profile). Figures go to
//! BENCHMARKS.md with the machine and date. Medians and ratios only: this machine is noisy.

use std::time::{Duration, Instant};

use poem::{Route, Server, get, handler, listener::TcpListener};
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

const WARMUP: usize = 200;
const SAMPLES: usize = 2000;

#[handler]
fn hello_world() -> &'static str {
    "hello"
}

fn summarise(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    let (p50, p90, p99) = (pick(0.5), pick(0.9), pick(0.99));
    println!(
        "{name:<34} p50 {:>8.1} µs   p90 {:>8.1} µs   p99 {:>8.1} µs",
        us(p50),
        us(p90),
        us(p99)
    );
    p50
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

async fn time<F, Fut>(mut op: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..WARMUP {
        op().await;
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        op().await;
        samples.push(started.elapsed());
    }
    samples
}

async fn rpc(client: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply: Value = client
        .post(url)
        .bearer_auth("bench")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
    reply["result"]["structuredContent"].clone()
}

#[tokio::main]
async fn main() {
    let hello_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hello_addr = hello_listener.local_addr().unwrap();
    drop(hello_listener);
    tokio::spawn(
        Server::new(TcpListener::bind(hello_addr.to_string())).run(Route::new().at("/hello", get(hello_world))),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;

    let app = TestApp::spawn("bench", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let url = app.mcp_url();
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    });
    // Prime the cache: the first render generates, every later one reuses.
    let hs = rpc(
        &client,
        &url,
        "svc_handshake",
        json!({ "intent": "bench card", "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let first = rpc(
        &client,
        &url,
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": { "title": "x" } }),
    )
    .await;
    let session = first["sessionId"].as_str().unwrap().to_owned();

    println!("loopback, sequential requests, {SAMPLES} samples after {WARMUP} warm-up, SQLite");
    let hello_url = format!("http://{hello_addr}/hello");
    let hello = summarise(
        "poem hello-world (reference)",
        time(|| async {
            client.get(&hello_url).send().await.unwrap().text().await.unwrap();
        })
        .await,
    );
    let reuse = summarise(
        "handshake + render (cache hit)",
        time(|| async {
            let hs = rpc(
                &client,
                &url,
                "svc_handshake",
                json!({ "intent": "bench card", "blueprintDraft": { "contract": contract } }),
            )
            .await;
            let r = rpc(
                &client,
                &url,
                "svc_render",
                json!({ "handshakeId": hs["handshakeId"], "props": { "title": "y" } }),
            )
            .await;
            assert_eq!(r["cache"]["hit"], true);
        })
        .await,
    );
    let consume = summarise(
        "svc_consume timeout 0",
        time(|| async {
            rpc(
                &client,
                &url,
                "svc_consume",
                json!({ "sessionId": session, "timeout": 0 }),
            )
            .await;
        })
        .await,
    );
    println!(
        "ratios to hello-world p50: reuse path {:.1}x, consume {:.1}x",
        us(reuse) / us(hello),
        us(consume) / us(hello)
    );
}
