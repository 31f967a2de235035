//! A bounded soak: mixed tool calls, live-channel sockets and long-polls against the real `svc`
//! binary (a child process on loopback, `--dev-allow-all`, SQLite) for `SOAK_MINUTES` (default
//! 30), reporting the server's RSS and open descriptors at the start, every few minutes, at the
//! end of the load and after it has drained. A leak shows as growth that does not come back.
//!
//! Run: `SOAK_MINUTES=30 cargo bench -p svc-tests --bench soak` (release profile; not in CI).
//! Figures go to BENCHMARKS.md. It stops by itself and sends traffic to loopback only.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::process::ServerProcess;

const SVC_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
/// Workers of each kind.
const AGENT_WORKERS: usize = 4;
const SOCKET_WORKERS: usize = 2;
const POLL_WORKERS: usize = 2;
/// Subscribed sockets held open for the whole run, beside the ones that come and go.
const IDLE_SOCKETS: usize = 50;
const SAMPLE_EVERY: Duration = Duration::from_secs(300);

#[derive(Default)]
struct Counts {
    calls: AtomicU64,
    failures: AtomicU64,
    sockets: AtomicU64,
    polls: AtomicU64,
}

fn main() {
    let minutes: f64 = std::env::var("SOAK_MINUTES")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(30.0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(soak(Duration::from_secs_f64(minutes * 60.0)));
}

async fn soak(length: Duration) {
    let data_dir = svc_tests::temp_dir("svc-soak");
    // The server's warnings and errors, kept beside the figures (`SOAK_SERVER_LOG` moves them).
    let log = std::env::var("SOAK_SERVER_LOG").map_or_else(|_| std::env::temp_dir().join("svc-soak.log"), Into::into);
    let server = ServerProcess::start_logging(SVC_BINARY, &data_dir, &["--dev-allow-all"], "warn", &log);
    let pid = server.pid();
    let client = reqwest::Client::new();
    let base = server.base.clone();
    let card = Card::render(&client, &base).await;

    let idle = hold_idle_sockets(&base, &card).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "soak of {:.1} min against {base} (pid {pid})",
        length.as_secs_f64() / 60.0
    );
    println!(
        "{:>8}  {:>9}  {:>5}  {:>9}  {:>8}  {:>8}  {:>8}",
        "minute", "RSS KiB", "fds", "calls", "failed", "sockets", "polls"
    );
    let counts = Arc::new(Counts::default());
    sample(pid, 0, &counts);

    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for i in 0..AGENT_WORKERS {
        workers.push(tokio::spawn(agent_worker(
            client.clone(),
            base.clone(),
            i,
            counts.clone(),
            stop.clone(),
        )));
    }
    for _ in 0..SOCKET_WORKERS {
        workers.push(tokio::spawn(socket_worker(
            base.clone(),
            card.clone(),
            counts.clone(),
            stop.clone(),
        )));
    }
    for _ in 0..POLL_WORKERS {
        workers.push(tokio::spawn(poll_worker(
            client.clone(),
            base.clone(),
            card.clone(),
            counts.clone(),
            stop.clone(),
        )));
    }

    let started = Instant::now();
    while started.elapsed() < length {
        let left = length.saturating_sub(started.elapsed());
        tokio::time::sleep(left.min(SAMPLE_EVERY)).await;
        sample(pid, started.elapsed().as_secs() / 60, &counts);
    }
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        let _ = worker.await;
    }
    drop(idle);
    tokio::time::sleep(Duration::from_secs(10)).await;
    println!("after the load stopped and the sockets closed (10 s):");
    sample(pid, started.elapsed().as_secs() / 60, &counts);
    drop(server);
    std::fs::remove_dir_all(&data_dir).ok();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let errors = logged.lines().filter(|l| l.contains("ERROR")).count();
    let warnings = logged.lines().filter(|l| l.contains("WARN")).count();
    println!("server log {}: {errors} errors, {warnings} warnings", log.display());
}

/// One line of figures: the server's resident memory and descriptors, and what the load did.
fn sample(pid: u32, minute: u64, counts: &Counts) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .map(|v| v.trim().trim_end_matches("kB").trim().to_owned())
        .unwrap_or_default();
    let fds = std::fs::read_dir(Path::new(&format!("/proc/{pid}/fd")))
        .map(|d| d.count())
        .unwrap_or(0);
    println!(
        "{minute:>8}  {rss:>9}  {fds:>5}  {:>9}  {:>8}  {:>8}  {:>8}",
        counts.calls.load(Ordering::Relaxed),
        counts.failures.load(Ordering::Relaxed),
        counts.sockets.load(Ordering::Relaxed),
        counts.polls.load(Ordering::Relaxed),
    );
}

/// A tool call's result; `None` on a transport failure, a JSON-RPC error or `isError`, whose
/// first occurrence per tool is printed so a failing soak says why.
async fn rpc(client: &reqwest::Client, base: &str, tool: &str, arguments: Value) -> Option<Value> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply = client
        .post(format!("{base}/mcp"))
        .bearer_auth("soak")
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await;
    let reply: Result<Value, String> = match reply {
        Ok(resp) => resp.json().await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let failure = match &reply {
        Ok(value) => match value.get("result") {
            Some(result) if result["isError"] != true => return Some(result.clone()),
            _ => value.to_string(),
        },
        Err(e) => e.clone(),
    };
    static REPORTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut reported = REPORTED.lock().unwrap();
    if !reported.iter().any(|t| t == tool) {
        reported.push(tool.to_owned());
        eprintln!("first failure of {tool}: {failure}");
    }
    None
}

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" }, "count": { "type": "integer" } } },
        "actionSpec": { "ping": { "type": "object" } },
        "streamSpec": { "ticks": { "mode": "append", "schema": { "type": "object", "properties": { "n": { "type": "integer" } } } } },
    })
}

/// A rendered card: what sockets subscribe to and long-polls drain.
#[derive(Clone)]
struct Card {
    session_id: String,
    ws_token: String,
}

impl Card {
    async fn render(client: &reqwest::Client, base: &str) -> Self {
        let intent = json!({ "intent": "soak card", "blueprintDraft": { "contract": contract() } });
        let handshake = rpc(client, base, "svc_handshake", intent).await.expect("handshake");
        let rendered = rpc(
            client,
            base,
            "svc_render",
            json!({ "handshakeId": handshake["structuredContent"]["handshakeId"], "props": { "title": "soak", "count": 0 } }),
        )
        .await
        .expect("render");
        let slice = &rendered["_meta"]["ai.svc/render"];
        Self {
            session_id: slice["sessionId"].as_str().expect("sessionId").to_owned(),
            ws_token: slice["wsToken"].as_str().expect("wsToken").to_owned(),
        }
    }
}

async fn subscribe(base: &str, card: &Card) -> Option<LiveClient> {
    let mut socket = LiveClient::connect(base).await;
    socket
        .send(
            "subscribe",
            json!({ "sessionId": card.session_id, "wsToken": card.ws_token }),
        )
        .await;
    let ack = socket.try_recv(Duration::from_secs(5)).await?;
    (ack["type"] == "ack").then_some(socket)
}

async fn hold_idle_sockets(base: &str, card: &Card) -> Vec<LiveClient> {
    let mut held = Vec::with_capacity(IDLE_SOCKETS);
    for _ in 0..IDLE_SOCKETS {
        held.extend(subscribe(base, card).await);
    }
    held
}

/// The agent's side: cached renders, updates, emits, reads, in a loop.
async fn agent_worker(
    client: reqwest::Client,
    base: String,
    worker: usize,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let card = Card::render(&client, &base).await;
        let session = json!(card.session_id);
        let steps = [
            (
                "svc_update",
                json!({ "sessionId": session, "kind": "replace", "props": { "title": format!("w{worker} #{n}"), "count": n } }),
            ),
            (
                "svc_emit",
                json!({ "sessionId": session, "channel": "ticks", "payload": { "n": n } }),
            ),
            ("svc_get_session", json!({ "sessionId": session })),
            ("svc_list_sessions", json!({})),
        ];
        counts.calls.fetch_add(2, Ordering::Relaxed);
        for (tool, arguments) in steps {
            counts.calls.fetch_add(1, Ordering::Relaxed);
            if rpc(&client, &base, tool, arguments).await.is_none() {
                counts.failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Cards opening and closing: subscribe, send an action, read the acknowledgement, go away.
async fn socket_worker(base: String, card: Card, counts: Arc<Counts>, stop: Arc<AtomicBool>) {
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let Some(mut socket) = subscribe(&base, &card).await else {
            counts.failures.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        seq += 1;
        socket
            .send(
                "action",
                json!({ "sessionId": card.session_id, "type": "data:submit", "payload": { "action": "ping" }, "clientSeq": seq }),
            )
            .await;
        if socket.try_recv(Duration::from_secs(5)).await.is_none() {
            counts.failures.fetch_add(1, Ordering::Relaxed);
        }
        counts.sockets.fetch_add(1, Ordering::Relaxed);
    }
}

/// The agent waiting for gestures: long-polls that drain what the sockets sent.
async fn poll_worker(client: reqwest::Client, base: String, card: Card, counts: Arc<Counts>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        if rpc(
            &client,
            &base,
            "svc_consume",
            json!({ "sessionId": card.session_id, "timeout": 5 }),
        )
        .await
        .is_none()
        {
            counts.failures.fetch_add(1, Ordering::Relaxed);
        }
        counts.polls.fetch_add(1, Ordering::Relaxed);
    }
}
