//! Held `svc_consume` long-polls over loopback (issue 18): resident memory of the server while N
//! calls with `timeout` 25 wait, per long-poll, and the latency of `/healthz` while they are held.
//!
//! Run: `cargo bench -p svc-tests --bench long_polls` (release profile), or through
//! `tests/load/long_polls.sh`. The server is the `svc` binary as a child process
//! (`serve --dev-allow-all`, SQLite; `LONG_POLLS_SVC_BIN` picks another binary). Knobs:
//! `LONG_POLLS_COUNT` (default 10,000), `LONG_POLLS_SESSIONS` (cards they spread over, default
//! 100), `LONG_POLLS_HEALTHZ` (sequential `/healthz` requests while held, default 2,000),
//! `LONG_POLLS_HTTP2` (0, the default: one HTTP/1.1 connection per poll, as separate agents hold
//! them; N: HTTP/2 without TLS, N polls per connection, as a proxy or a host that multiplexes
//! sends them; the server allows 200 streams per connection).
//! Loopback only; every poll ends by its own timeout, nothing is left running.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SVC_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const CONSUME_TIMEOUT_SECONDS: u64 = 25;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

struct Server {
    child: Child,
    base: String,
    data_dir: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

impl Server {
    fn start() -> Self {
        let binary = std::env::var("LONG_POLLS_SVC_BIN").unwrap_or_else(|_| SVC_BINARY.to_owned());
        let data_dir = std::env::temp_dir().join(format!("svc-long-polls-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&data_dir).unwrap();
        let mut child = Command::new(binary)
            .args([
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dev-allow-all",
                "--data-dir",
            ])
            .arg(&data_dir)
            .env("RUST_LOG", "warn")
            // Every poll is the one dev caller's: lift its bound of held polls past the count
            // (binaries before the bound refuse the variable: LONG_POLLS_UNBOUNDED_BINARY=1).
            .envs(
                std::env::var_os("LONG_POLLS_UNBOUNDED_BINARY")
                    .is_none()
                    .then_some(("SVC_LIMITS__LONG_POLLS_PER_CALLER", "1000000")),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let base = loop {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "the server exited");
            if let Some(url) = line.split("listening on ").nth(1) {
                break url.trim().to_owned();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        Self { child, base, data_dir }
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

async fn call(client: &reqwest::Client, base: &str, tool: &str, arguments: Value) -> Result<Value, String> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply: Value = client
        .post(format!("{base}/mcp"))
        .bearer_auth("bench")
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    match reply["result"]["structuredContent"].as_object() {
        Some(content) => Ok(Value::Object(content.clone())),
        None => Err(reply.to_string()),
    }
}

async fn render(client: &reqwest::Client, base: &str) -> String {
    let contract = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "ok": { "type": "object" } } });
    let hs = call(
        client,
        base,
        "svc_handshake",
        json!({ "intent": "long-poll bench", "blueprintDraft": { "contract": contract } }),
    )
    .await
    .unwrap();
    let rendered = call(
        client,
        base,
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": {} }),
    )
    .await
    .unwrap();
    rendered["sessionId"].as_str().unwrap().to_owned()
}

async fn gauge(client: &reqwest::Client, base: &str, name: &str) -> f64 {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0.0)
}

async fn run() {
    let count = knob("LONG_POLLS_COUNT", 10_000);
    let sessions = knob("LONG_POLLS_SESSIONS", 100).clamp(1, count);
    let probes = knob("LONG_POLLS_HEALTHZ", 2_000);
    let per_connection = knob("LONG_POLLS_HTTP2", 0);
    let server = Server::start();
    let base = server.base.clone();
    // One connection per long-poll, as separate agents would hold them.
    let polls = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(CONSUME_TIMEOUT_SECONDS + 30))
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let mut ids = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        ids.push(render(&client, &base).await);
    }
    // Warm the consume path once, then measure from a settled process.
    call(
        &client,
        &base,
        "svc_consume",
        json!({ "sessionId": ids[0], "timeout": 0 }),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = server.rss_kib();

    let h2_connection_count = if per_connection == 0 {
        0
    } else {
        count.div_ceil(per_connection)
    };
    let mut h2_connections = vec![];
    for _ in 0..h2_connection_count {
        h2_connections.push(svc_tests::h2::connect(&base).await);
    }
    let started = Instant::now();
    let mut held = Vec::with_capacity(count);
    for i in 0..count {
        let (polls, base, id) = (polls.clone(), base.clone(), ids[i % sessions].clone());
        let arguments = json!({ "sessionId": id, "timeout": CONSUME_TIMEOUT_SECONDS });
        let stream = h2_connections.get(i / per_connection.max(1)).cloned();
        let url = format!("{base}/mcp");
        held.push(tokio::spawn(async move {
            match stream {
                Some(connection) => {
                    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": { "name": "svc_consume", "arguments": arguments } });
                    let (status, text) = svc_tests::h2::post_json(connection, &url, "bench", &body).await?;
                    let reply: Value = serde_json::from_str(&text).map_err(|e| format!("{status}: {e}: {text}"))?;
                    reply["result"]["structuredContent"]
                        .as_object()
                        .map(|content| Value::Object(content.clone()))
                        .ok_or_else(|| reply.to_string())
                }
                None => call(&polls, &base, "svc_consume", arguments).await,
            }
        }));
    }
    // Wait until the server holds them all (bounded by the polls' own timeout).
    let mut waiting = 0.0;
    while started.elapsed() < Duration::from_secs(CONSUME_TIMEOUT_SECONDS - 5) {
        waiting = gauge(&client, &base, "svc_consume_waits").await;
        if waiting as usize >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let opened_in = started.elapsed();
    let during = server.rss_kib();

    let mut samples = Vec::with_capacity(probes);
    for _ in 0..probes {
        if started.elapsed() >= Duration::from_secs(CONSUME_TIMEOUT_SECONDS - 1) {
            break;
        }
        let t = Instant::now();
        let status = client.get(format!("{base}/healthz")).send().await.unwrap().status();
        samples.push(t.elapsed());
        assert!(status.is_success());
    }
    let still_waiting = gauge(&client, &base, "svc_consume_waits").await;
    let mut failed = 0;
    for poll in held {
        match poll.await {
            Ok(Ok(_)) => {}
            outcome => {
                if failed == 0 {
                    println!("first failed poll: {outcome:?}");
                }
                failed += 1;
            }
        }
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    let grown = during.saturating_sub(before);
    let transport = match per_connection {
        0 => "one HTTP/1.1 connection each".to_owned(),
        n => format!("HTTP/2, {n} per connection ({} connections)", h2_connections.len()),
    };
    println!(
        "loopback; svc (SQLite, --dev-allow-all), {count} svc_consume(timeout {CONSUME_TIMEOUT_SECONDS}) over {sessions} cards, {transport}"
    );
    println!(
        "held: {waiting} waiting after {:.1} s ({still_waiting} after the probes); failed polls: {failed}",
        opened_in.as_secs_f64()
    );
    println!(
        "RSS: {before} KiB before, {during} KiB while held: +{grown} KiB, {:.2} KiB per long-poll",
        grown as f64 / count as f64
    );
    println!(
        "/healthz while held ({} requests, one connection): p50 {:.0} µs, p99 {:.0} µs",
        samples.len(),
        pick(0.5).as_secs_f64() * 1e6,
        pick(0.99).as_secs_f64() * 1e6
    );
}
