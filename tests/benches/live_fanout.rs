//! Live-channel fan-out over loopback: delivery latency of `svc_emit` to 1, 100 and 1,000
//! subscribed sockets, and memory per idle subscribed socket (RSS delta of the server process),
//! against a raw poem WebSocket broadcast server measured the same way in the same run.
//!
//! Run: `cargo bench -p svc-tests --bench live_fanout` (release profile). Both servers are child
//! processes (the real `svc` binary with `--dev-allow-all` on SQLite, and this binary in reference
//! mode), so their RSS is theirs alone. Latency is from the start of the emit request to the
//! arrival of the frame on each socket; every emit waits for all sockets before the next.
//! Figures go to BENCHMARKS.md; read medians and ratios, this machine is noisy.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;

const SVC_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
/// Set in the environment of the child that serves the reference.
const REFERENCE_MODE: &str = "LIVE_FANOUT_REFERENCE";
/// (sockets, emits) per round; `LIVE_FANOUT_ROUNDS="1:50,100:10"` runs others (a dev smoke run).
const ROUNDS: [(usize, usize); 3] = [(1, 300), (100, 60), (1000, 20)];
/// Idle sockets of the memory figure; `LIVE_FANOUT_IDLE` changes it.
const IDLE_SOCKETS: usize = 1000;

fn round_plan() -> Vec<(usize, usize)> {
    match std::env::var("LIVE_FANOUT_ROUNDS") {
        Ok(spec) => spec
            .split(',')
            .map(|round| {
                let (sockets, emits) = round.split_once(':').expect("LIVE_FANOUT_ROUNDS: sockets:emits,...");
                (sockets.trim().parse().unwrap(), emits.trim().parse().unwrap())
            })
            .collect(),
        Err(_) => ROUNDS.to_vec(),
    }
}

/// `LIVE_FANOUT_PER_EMIT=1`: print each emit's first, median and last arrival (is the p99 one
/// slow emit, or the tail of every emit?).
fn per_emit_report() -> bool {
    std::env::var_os("LIVE_FANOUT_PER_EMIT").is_some()
}

fn idle_sockets() -> usize {
    std::env::var("LIVE_FANOUT_IDLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(IDLE_SOCKETS)
}
/// Sockets opening at once; a card-like ramp, not a connect storm (see BENCHMARKS.md).
const CONNECT_CONCURRENCY: usize = 64;
const RECEIPT_TIMEOUT: Duration = Duration::from_secs(20);

fn main() {
    if std::env::var_os(REFERENCE_MODE).is_some() {
        reference::serve();
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

/// A server child process; killed when dropped.
struct Child_ {
    child: Child,
    base: String,
    data_dir: Option<PathBuf>,
}

impl Drop for Child_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.data_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Child_ {
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

/// Starts a child and reads the `listening on <url>` line from its stdout.
fn spawn(mut command: Command, data_dir: Option<PathBuf>) -> Child_ {
    // LIVE_FANOUT_SERVER_LOG=<file>: keep the servers' stderr (their logs) there.
    let stderr = match std::env::var("LIVE_FANOUT_SERVER_LOG") {
        Ok(path) => Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap(),
        ),
        Err(_) => Stdio::null(),
    };
    let mut child = command.stdout(Stdio::piped()).stderr(stderr).spawn().unwrap();
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
    Child_ { child, base, data_dir }
}

/// One target: how to render a card, subscribe a socket and emit.
enum Target {
    Svc(Svc),
    Reference(Reference),
}

impl Target {
    fn name(&self) -> &str {
        match self {
            Self::Svc(t) => t.name(),
            Self::Reference(t) => t.name(),
        }
    }

    fn process(&self) -> &Child_ {
        match self {
            Self::Svc(t) => &t.process,
            Self::Reference(t) => &t.process,
        }
    }

    /// A fresh topic (a rendered card): what a socket subscribes with.
    async fn topic(&self) -> Value {
        match self {
            Self::Svc(t) => t.topic().await,
            Self::Reference(t) => t.topic().await,
        }
    }

    fn subscribe_frame(&self, topic: &Value) -> String {
        match self {
            Self::Svc(t) => t.subscribe_frame(topic),
            Self::Reference(t) => t.subscribe_frame(topic),
        }
    }

    async fn emit(&self, topic: &Value, n: usize) {
        match self {
            Self::Svc(t) => t.emit(topic, n).await,
            Self::Reference(t) => t.emit(topic, n).await,
        }
    }
}

struct Svc {
    process: Child_,
    client: reqwest::Client,
}

impl Svc {
    fn name(&self) -> &str {
        "svc /ws, svc_emit"
    }

    async fn topic(&self) -> Value {
        let contract = json!({
            "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
            "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
        });
        let hs = self
            .rpc(
                "svc_handshake",
                json!({ "intent": "fan-out bench", "blueprintDraft": { "contract": contract } }),
            )
            .await;
        let body = self
            .call(
                "svc_render",
                json!({ "handshakeId": hs["handshakeId"], "props": { "title": "fan-out" } }),
            )
            .await;
        body["result"]["_meta"]["ai.svc/render"].clone()
    }

    fn subscribe_frame(&self, slice: &Value) -> String {
        json!({ "type": "subscribe", "payload": { "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] } })
            .to_string()
    }

    async fn emit(&self, slice: &Value, n: usize) {
        let accepted = self
            .rpc(
                "svc_emit",
                json!({ "sessionId": slice["sessionId"], "channel": "log", "payload": format!("e{n}") }),
            )
            .await;
        assert_eq!(accepted["accepted"], true);
    }
}

impl Svc {
    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
        self.client
            .post(format!("{}/mcp", self.process.base))
            .bearer_auth("bench")
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn rpc(&self, tool: &str, arguments: Value) -> Value {
        let reply = self.call(tool, arguments).await;
        assert!(reply["result"]["structuredContent"].is_object(), "{reply}");
        reply["result"]["structuredContent"].clone()
    }
}

struct Reference {
    process: Child_,
    client: reqwest::Client,
}

impl Reference {
    fn name(&self) -> &str {
        "raw poem WebSocket broadcast"
    }

    async fn topic(&self) -> Value {
        json!({ "sessionId": uuid::Uuid::new_v4().to_string() })
    }

    fn subscribe_frame(&self, topic: &Value) -> String {
        json!({ "type": "subscribe", "payload": { "sessionId": topic["sessionId"] } }).to_string()
    }

    async fn emit(&self, topic: &Value, n: usize) {
        // A frame of the same shape and size as svc's `data` frame.
        let frame = json!({ "type": "data", "payload": {
            "sessionId": topic["sessionId"], "channel": "log", "seq": n, "mode": "append",
            "payload": format!("e{n}"), "complete": false, "timestamp": chrono::Utc::now().to_rfc3339(),
        } });
        let status = self
            .client
            .post(format!("{}/emit", self.process.base))
            .body(frame.to_string())
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success());
    }
}

/// Where the sockets note each `data` frame's arrival. The measuring task is woken once per
/// emit, when the last socket has its frame, not once per frame: the bench's own CPU shares the
/// two cores with the server it measures, and a channel message per frame (each waking the
/// measuring thread) plus a `Value` parse per frame made the client about half of the machine's
/// CPU during a 1,000-socket round (BENCHMARKS.md, session 52).
#[derive(Default)]
struct Arrivals {
    /// (the emit's number, from its payload `e<n>`; when the frame was read)
    noted: std::sync::Mutex<Vec<(u64, Instant)>>,
    count: std::sync::atomic::AtomicUsize,
    /// How many arrivals complete an emit (the round's sockets).
    expected: std::sync::atomic::AtomicUsize,
    all_in: tokio::sync::Notify,
}

impl Arrivals {
    fn note(&self, emit: u64, at: Instant) {
        use std::sync::atomic::Ordering;
        self.noted.lock().unwrap().push((emit, at));
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.expected.load(Ordering::Acquire) {
            self.all_in.notify_one();
        }
    }

    /// Clears the notes for the next emit, which `sockets` arrivals complete.
    fn expect(&self, sockets: usize) {
        use std::sync::atomic::Ordering;
        self.noted.lock().unwrap().clear();
        self.expected.store(sockets, Ordering::Release);
        self.count.store(0, Ordering::Release);
    }

    /// Waits until every socket noted a frame (false after `patience`), and takes the notes.
    async fn all(&self, patience: Duration) -> Option<Vec<(u64, Instant)>> {
        use std::sync::atomic::Ordering;
        let deadline = tokio::time::Instant::now() + patience;
        while self.count.load(Ordering::Acquire) < self.expected.load(Ordering::Acquire) {
            // A permit left by an earlier emit wakes this early: the count is asked again.
            tokio::time::timeout_at(deadline, self.all_in.notified()).await.ok()?;
        }
        Some(std::mem::take(&mut *self.noted.lock().unwrap()))
    }
}

/// What the client reads of a frame: its type and, in a `data` frame, the payload (borrowed,
/// nothing else parsed).
#[derive(serde::Deserialize)]
struct Frame<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(borrow, default)]
    payload: Option<FramePayload<'a>>,
}

#[derive(serde::Deserialize)]
struct FramePayload<'a> {
    #[serde(borrow, default)]
    payload: Option<&'a serde_json::value::RawValue>,
}

impl Frame<'_> {
    /// The emit number of a `data` frame's payload `"e<n>"`.
    fn emit(&self) -> Option<u64> {
        let raw = self.payload.as_ref()?.payload?.get();
        raw.strip_prefix("\"e")?.strip_suffix('"')?.parse().ok()
    }
}

/// The bench's sockets read into 4 KiB, as svc's do. tungstenite zero-fills its read buffer up
/// to its capacity before every read call (`FrameCodec::read_in`), 128 KiB by default: with the
/// default, the client's 1,000 sockets zeroed 128 MB per emit, and that memset was most of the
/// CPU a 1,000-socket round used on the shared two cores (BENCHMARKS.md, session 32).
/// `LIVE_FANOUT_CLIENT_READ_BUFFER=<bytes>` sets another size (131072: the earlier client).
fn client_read_buffer() -> usize {
    std::env::var("LIVE_FANOUT_CLIENT_READ_BUFFER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 * 1024)
}

fn client_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(client_read_buffer())
}

/// Opens `count` sockets subscribed to `topic`; each forwards the payload of every `data` frame.
async fn open_sockets(
    target: &Target,
    topic: &Value,
    count: usize,
    base: &str,
) -> (Vec<tokio::task::JoinHandle<()>>, Arc<Arrivals>) {
    let arrivals = Arc::new(Arrivals::default());
    let url = format!("{}/ws", base.replace("http://", "ws://"));
    let concurrency = std::env::var("LIVE_FANOUT_CONNECT_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CONNECT_CONCURRENCY);
    let gate = Arc::new(Semaphore::new(concurrency));
    let mut ready = Vec::with_capacity(count);
    let mut tasks = Vec::with_capacity(count);
    for _ in 0..count {
        let (url, arrivals, gate) = (url.clone(), arrivals.clone(), gate.clone());
        let subscribe = target.subscribe_frame(topic);
        let (acked_tx, acked_rx) = tokio::sync::oneshot::channel::<Result<(), String>>();
        ready.push(acked_rx);
        tasks.push(tokio::spawn(async move {
            let mut permit = Some(gate.acquire_owned().await.unwrap());
            let (mut socket, _) =
                match tokio_tungstenite::connect_async_with_config(&url, Some(client_config()), false).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = acked_tx.send(Err(format!("connect: {e}")));
                        return;
                    }
                };
            socket.send(Message::Text(subscribe.into())).await.unwrap();
            let mut acked = Some(acked_tx);
            while let Some(message) = socket.next().await {
                // Received now: the time this client then spends parsing is not the server's.
                let received = Instant::now();
                let Ok(Message::Text(text)) = message else {
                    if let Ok(Message::Close(frame)) = &message
                        && let Some(tx) = acked.take()
                    {
                        let _ = tx.send(Err(format!("socket closed before ack: {frame:?}")));
                    }
                    continue;
                };
                let frame: Frame = serde_json::from_str(&text).unwrap();
                match frame.kind {
                    "ack" => {
                        if let Some(tx) = acked.take() {
                            let _ = tx.send(Ok(()));
                        }
                    }
                    "data" => {
                        if let Some(emit) = frame.emit() {
                            arrivals.note(emit, received);
                        }
                    }
                    "error" => {
                        if let Some(tx) = acked.take() {
                            let _ = tx.send(Err(format!("error before ack: {text}")));
                        }
                    }
                    _ => {}
                }
                if acked.is_none() {
                    // Subscribed: let the next socket open.
                    permit.take();
                }
            }
            drop(permit);
            if let Some(tx) = acked.take() {
                let _ = tx.send(Err("socket ended before ack".into()));
            }
        }));
    }
    for (i, acked) in ready.into_iter().enumerate() {
        match tokio::time::timeout(RECEIPT_TIMEOUT, acked).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => panic!("{}: socket {i} of {count}: {e}", target.name()),
            Ok(Err(_)) => panic!("{}: socket {i} of {count} vanished", target.name()),
            Err(_) => panic!(
                "{}: socket {i} of {count}: no ack within {RECEIPT_TIMEOUT:?}",
                target.name()
            ),
        }
    }
    (tasks, arrivals)
}

struct Round {
    sockets: usize,
    p50: Duration,
    p99: Duration,
}

async fn latency(target: &Target, base: &str, sockets: usize, emits: usize) -> Round {
    let topic = target.topic().await;
    let (tasks, arrivals) = open_sockets(target, &topic, sockets, base).await;
    let mut samples = Vec::with_capacity(sockets * emits);
    // Two warm-up emits, not measured.
    for n in 0..emits + 2 {
        arrivals.expect(sockets);
        let started = Instant::now();
        target.emit(&topic, n).await;
        let Some(noted) = arrivals.all(RECEIPT_TIMEOUT).await else {
            panic!("{}: emit {n} did not reach all {sockets} sockets", target.name())
        };
        // Each socket heard this emit once, and nothing else since the last (in order).
        assert!(
            noted.iter().all(|(emit, _)| *emit == n as u64),
            "frames arrive in order"
        );
        let mut delays: Vec<Duration> = noted.into_iter().map(|(_, at)| at - started).collect();
        if per_emit_report() {
            delays.sort();
            println!(
                "  {} sockets, emit {n}: first {:.0} µs, median {:.0} µs, last {:.0} µs",
                sockets,
                us(delays[0]),
                us(delays[delays.len() / 2]),
                us(delays[delays.len() - 1])
            );
        }
        if n >= 2 {
            samples.extend(delays);
        }
    }
    for task in tasks {
        task.abort();
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Round {
        sockets,
        p50: pick(0.5),
        p99: pick(0.99),
    }
}

/// RSS growth of the server per idle subscribed socket, over `count` sockets.
async fn memory(target: &Target, count: usize) -> f64 {
    let process = target.process();
    let topic = target.topic().await;
    // Warm the paths once (allocator pools, caches), then measure.
    let (warm, _) = open_sockets(target, &topic, 10, &process.base).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = process.rss_kib();
    let (tasks, _arrivals) = open_sockets(target, &topic, count, &process.base).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = process.rss_kib();
    for task in tasks.into_iter().chain(warm) {
        task.abort();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    (after.saturating_sub(before)) as f64 * 1024.0 / count as f64
}

async fn measure(target: &Target) -> (Vec<Round>, f64) {
    let per_socket = memory(target, idle_sockets()).await;
    let mut rounds = vec![];
    for (sockets, emits) in round_plan() {
        rounds.push(latency(target, &target.process().base, sockets, emits).await);
    }
    (rounds, per_socket)
}

async fn run() {
    let data_dir = std::env::temp_dir().join(format!("svc-fanout-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&data_dir).unwrap();
    // LIVE_FANOUT_SVC_PREFIX="prlimit --nofile=1024:1024": run svc under a wrapper (limits).
    let prefix: Vec<String> = std::env::var("LIVE_FANOUT_SVC_PREFIX")
        .map(|p| p.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut command = match prefix.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(SVC_BINARY);
            c
        }
        // LIVE_FANOUT_SVC_BIN=<path>: measure that binary (target/release/svc) instead.
        None => Command::new(std::env::var("LIVE_FANOUT_SVC_BIN").unwrap_or_else(|_| SVC_BINARY.to_owned())),
    };
    command
        .args(["serve", "--port", "0", "--dev-allow-all", "--data-dir"])
        .arg(&data_dir);
    let svc = Target::Svc(Svc {
        process: spawn(command, Some(data_dir)),
        client: reqwest::Client::new(),
    });
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(REFERENCE_MODE, "1");
    let reference = Target::Reference(Reference {
        process: spawn(command, None),
        client: reqwest::Client::new(),
    });

    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env(REFERENCE_MODE, "1")
        .env("LIVE_FANOUT_REFERENCE_READ_BUFFER", "4096");
    let small_buffers = Target::Reference(Reference {
        process: spawn(command, None),
        client: reqwest::Client::new(),
    });

    println!(
        "loopback; server processes: svc (SQLite, --dev-allow-all) and a raw poem WebSocket broadcast (latency: with svc's 4 KiB read buffer); client read buffer {} bytes",
        client_read_buffer()
    );
    let (svc_rounds, svc_mem) = measure(&svc).await;
    // Latency against the reference with svc's read buffer too: tungstenite zero-fills a socket's
    // read buffer before every read, and the reference's loop reads again after each frame it
    // sends, so with the default 128 KiB it would zero 128 MB per emit at 1,000 sockets.
    let (ref_rounds, ref_small_mem) = measure(&small_buffers).await;
    let ref_mem = memory(&reference, idle_sockets()).await;
    println!(
        "{:<10} {:>14} {:>14} {:>16} {:>16} {:>10}",
        "sockets", "svc p50", "svc p99", "reference p50", "reference p99", "p50 ratio"
    );
    for (s, r) in svc_rounds.iter().zip(&ref_rounds) {
        println!(
            "{:<10} {:>11.0} µs {:>11.0} µs {:>13.0} µs {:>13.0} µs {:>9.1}x",
            s.sockets,
            us(s.p50),
            us(s.p99),
            us(r.p50),
            us(r.p99),
            us(s.p50) / us(r.p50)
        );
    }
    println!(
        "memory per idle subscribed socket (RSS delta over {}): svc {:.1} KiB, reference {:.1} KiB (ratio {:.2}x), reference with svc's 4 KiB read buffer {:.1} KiB (ratio {:.2}x)",
        idle_sockets(),
        svc_mem / 1024.0,
        ref_mem / 1024.0,
        svc_mem / ref_mem.max(1.0),
        ref_small_mem / 1024.0,
        svc_mem / ref_small_mem.max(1.0)
    );
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The reference: poem's WebSocket with a broadcast per topic, nothing else.
mod reference {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use futures_util::{SinkExt, StreamExt};
    use poem::listener::{Acceptor, Listener, TcpListener};
    use poem::web::Data;
    use poem::web::websocket::{Message, WebSocket, WebSocketConfig};
    use poem::{EndpointExt, IntoResponse, Route, Server, get, handler, post};
    use serde_json::Value;
    use tokio::sync::broadcast;

    type Topics = Arc<Mutex<HashMap<String, broadcast::Sender<String>>>>;

    fn topic(topics: &Topics, id: &str) -> broadcast::Sender<String> {
        topics
            .lock()
            .unwrap()
            .entry(id.to_owned())
            .or_insert_with(|| broadcast::channel(1024).0)
            .clone()
    }

    #[handler]
    fn ws(socket: WebSocket, Data(topics): Data<&Topics>) -> impl IntoResponse {
        let topics = topics.clone();
        // LIVE_FANOUT_REFERENCE_READ_BUFFER=<bytes>: the read buffer svc's /ws uses, for a like-for-like memory figure.
        let mut config = WebSocketConfig::default();
        if let Some(bytes) = std::env::var("LIVE_FANOUT_REFERENCE_READ_BUFFER")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            config = config.read_buffer_size(bytes);
        }
        socket.config(config).on_upgrade(move |stream| async move {
            let (mut sink, mut inbound) = stream.split();
            // The first frame names the topic, like svc's subscribe.
            let Some(Ok(Message::Text(text))) = inbound.next().await else {
                return;
            };
            let frame: Value = serde_json::from_str(&text).unwrap_or_default();
            let id = frame["payload"]["sessionId"].as_str().unwrap_or_default().to_owned();
            let mut rx = topic(&topics, &id).subscribe();
            if sink
                .send(Message::Text(r#"{"type":"ack","payload":{}}"#.into()))
                .await
                .is_err()
            {
                return;
            }
            loop {
                tokio::select! {
                    message = inbound.next() => match message {
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        _ => {}
                    },
                    frame = rx.recv() => match frame {
                        Ok(text) => if sink.send(Message::Text(text)).await.is_err() { return },
                        Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => return,
                    },
                }
            }
        })
    }

    #[handler]
    fn emit(body: String, Data(topics): Data<&Topics>) -> &'static str {
        let frame: Value = serde_json::from_str(&body).unwrap_or_default();
        let id = frame["payload"]["sessionId"].as_str().unwrap_or_default();
        let _ = topic(topics, id).send(body);
        r#"{"accepted":true}"#
    }

    pub fn serve() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
            let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
            let topics: Topics = Arc::default();
            let app = Route::new().at("/ws", get(ws)).at("/emit", post(emit)).data(topics);
            println!("reference listening on http://{addr}");
            // As svc's connections: each write sent at once.
            Server::new_with_acceptor(svc::connections::NoDelay::new(acceptor))
                .run(app)
                .await
                .unwrap();
        });
    }
}
