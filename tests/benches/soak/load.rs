//! The soak's load: paced agent, socket, long-poll and idle-card workers, and the card whose
//! wsToken they refresh before it expires, as the card runtime does.
//!
//! Every loop is paced by a fixed period and sleeps with a growing backoff after a failure, so a
//! failing step can never turn into a busy loop.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use tokio::task::JoinHandle;
use tokio::time::{Interval, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

/// Agent workers; each renders a card and makes four calls on it once per period.
const AGENT_WORKERS: usize = 2;
const AGENT_PERIOD: Duration = Duration::from_secs(1);
/// Cards that come and go: subscribe, one action, its acknowledgement, close.
const SOCKET_WORKERS: usize = 2;
const SOCKET_PERIOD: Duration = Duration::from_secs(1);
/// Long-polls (`svc_consume`, timeout 5 s) that drain what the sockets sent.
const POLL_WORKERS: usize = 2;
const POLL_PERIOD: Duration = Duration::from_secs(1);
/// Subscribed sockets held open for the whole run, beside the ones that come and go.
const IDLE_SOCKETS: usize = 50;
/// How often an idle card speaks; the server closes a socket silent for 60 s.
const IDLE_PING: Duration = Duration::from_secs(20);
/// wsTokens live 180 s; a card refreshes its token at two thirds of that.
const TOKEN_REFRESH_AFTER: Duration = Duration::from_secs(120);
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(10);
const REPLY_WAIT: Duration = Duration::from_secs(5);

/// What the load did, and what failed where.
#[derive(Default)]
pub struct Tally {
    calls: AtomicU64,
    sockets: AtomicU64,
    polls: AtomicU64,
    resubscribes: AtomicU64,
    failures: Mutex<BTreeMap<&'static str, u64>>,
}

pub struct Counts {
    pub calls: u64,
    pub failures: u64,
    pub sockets: u64,
    pub polls: u64,
    pub resubscribes: u64,
}

impl Tally {
    fn failed(&self, step: &'static str) {
        *self.failures.lock().unwrap().entry(step).or_default() += 1;
    }

    pub fn snapshot(&self) -> Counts {
        Counts {
            calls: self.calls.load(Ordering::Relaxed),
            failures: self.failures.lock().unwrap().values().sum(),
            sockets: self.sockets.load(Ordering::Relaxed),
            polls: self.polls.load(Ordering::Relaxed),
            resubscribes: self.resubscribes.load(Ordering::Relaxed),
        }
    }

    /// `none`, or `step: count` for every step that failed.
    pub fn failures_by_step(&self) -> String {
        let failures = self.failures.lock().unwrap();
        if failures.is_empty() {
            return "none".to_owned();
        }
        failures
            .iter()
            .map(|(step, n)| format!("{step}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Sleeps after failures: 250 ms, doubling up to 10 s; a success starts over.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Self(BACKOFF_FIRST)
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(BACKOFF_MAX);
    }

    fn reset(&mut self) {
        self.0 = BACKOFF_FIRST;
    }
}

fn pacer(period: Duration) -> Interval {
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    interval
}

/// A tool call's result; `None` on a transport failure, a JSON-RPC error or `isError` (counted
/// under the tool's name; the first occurrence per tool is printed so a failing soak says why).
async fn rpc(
    client: &reqwest::Client,
    base: &str,
    tool: &'static str,
    arguments: Value,
    tally: &Tally,
) -> Option<Value> {
    tally.calls.fetch_add(1, Ordering::Relaxed);
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply = client
        .post(format!("{base}/mcp"))
        .bearer_auth("soak")
        .header("accept", "application/json, text/event-stream")
        .timeout(Duration::from_secs(30))
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
    let first = !tally.failures.lock().unwrap().contains_key(tool);
    tally.failed(tool);
    if first {
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

/// A wsToken and when it was minted.
struct Minted {
    token: String,
    at: Instant,
}

/// A rendered card: what sockets subscribe to and long-polls drain. Clones share one token.
#[derive(Clone)]
pub struct Card {
    session_id: String,
    token: Arc<tokio::sync::Mutex<Minted>>,
}

impl Card {
    pub async fn render(client: &reqwest::Client, base: &str, tally: &Tally) -> Option<Self> {
        let intent = json!({ "intent": "soak card", "blueprintDraft": { "contract": contract() } });
        let handshake = rpc(client, base, "svc_handshake", intent, tally).await?;
        let rendered = rpc(
            client,
            base,
            "svc_render",
            json!({ "handshakeId": handshake["structuredContent"]["handshakeId"], "props": { "title": "soak", "count": 0 } }),
            tally,
        )
        .await?;
        let slice = &rendered["_meta"]["ai.svc/render"];
        Some(Self {
            session_id: slice["sessionId"].as_str()?.to_owned(),
            token: Arc::new(tokio::sync::Mutex::new(Minted {
                token: slice["wsToken"].as_str()?.to_owned(),
                at: Instant::now(),
            })),
        })
    }

    /// The current wsToken, refreshed first when it is old. One caller refreshes; the others
    /// wait for it and share the new token.
    async fn ws_token(&self, client: &reqwest::Client, base: &str, tally: &Tally) -> String {
        let mut minted = self.token.lock().await;
        if minted.at.elapsed() >= TOKEN_REFRESH_AFTER {
            self.refresh(&mut minted, client, base, tally).await;
        }
        minted.token.clone()
    }

    /// A fresh token now (after a refused subscribe), unless another caller just got one.
    async fn force_refresh(&self, client: &reqwest::Client, base: &str, tally: &Tally) {
        let mut minted = self.token.lock().await;
        if minted.at.elapsed() >= BACKOFF_FIRST {
            self.refresh(&mut minted, client, base, tally).await;
        }
    }

    async fn refresh(&self, minted: &mut Minted, client: &reqwest::Client, base: &str, tally: &Tally) {
        let refreshed = rpc(
            client,
            base,
            "svc_runtime_refresh_ws_token",
            json!({ "sessionId": self.session_id }),
            tally,
        )
        .await;
        if let Some(token) = refreshed
            .as_ref()
            .and_then(|r| r["structuredContent"]["wsToken"].as_str())
        {
            *minted = Minted {
                token: token.to_owned(),
                at: Instant::now(),
            };
        }
    }

    /// A socket subscribed to this card, or `None` (counted as a `ws subscribe` failure).
    async fn subscribe(&self, client: &reqwest::Client, base: &str, tally: &Tally) -> Option<LiveClient> {
        let token = self.ws_token(client, base, tally).await;
        let url = format!("{}/ws", base.replace("http://", "ws://"));
        let subscribed = async {
            let (socket, _) = tokio_tungstenite::connect_async(url).await.ok()?;
            let mut live = LiveClient { socket };
            let frame = json!({ "type": "subscribe", "payload": { "sessionId": self.session_id, "wsToken": token } });
            live.socket.send(Message::Text(frame.to_string().into())).await.ok()?;
            let ack = live.try_recv(REPLY_WAIT).await?;
            (ack["type"] == "ack").then_some(live)
        }
        .await;
        if subscribed.is_none() {
            tally.failed("ws subscribe");
            self.force_refresh(client, base, tally).await;
        }
        subscribed
    }
}

/// Idle cards: each holds a subscribed socket, pings it like the runtime's heartbeat, reads
/// what arrives, and resubscribes (with backoff) if the socket closes.
pub fn hold_idle_sockets(
    client: &reqwest::Client,
    base: &str,
    card: &Card,
    tally: &Arc<Tally>,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<()>> {
    (0..IDLE_SOCKETS)
        .map(|_| {
            tokio::spawn(idle_card(
                client.clone(),
                base.to_owned(),
                card.clone(),
                tally.clone(),
                stop.clone(),
            ))
        })
        .collect()
}

async fn idle_card(client: reqwest::Client, base: String, card: Card, tally: Arc<Tally>, stop: Arc<AtomicBool>) {
    let mut backoff = Backoff::new();
    let mut first = true;
    while !stop.load(Ordering::Relaxed) {
        let Some(mut socket) = card.subscribe(&client, &base, &tally).await else {
            backoff.wait().await;
            continue;
        };
        backoff.reset();
        if !std::mem::take(&mut first) {
            tally.resubscribes.fetch_add(1, Ordering::Relaxed);
        }
        let mut last_ping = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            let wait = IDLE_PING
                .saturating_sub(last_ping.elapsed())
                .min(Duration::from_secs(1));
            if let Some(frame) = socket.try_recv(wait).await
                && frame["type"] == "_closed"
            {
                break;
            }
            if last_ping.elapsed() >= IDLE_PING {
                let ping = json!({ "type": "ping" }).to_string();
                if socket.socket.send(Message::Text(ping.into())).await.is_err() {
                    tally.failed("idle ping");
                    break;
                }
                last_ping = Instant::now();
            }
        }
    }
}

/// The agent, socket and long-poll workers.
pub fn start_workers(
    client: &reqwest::Client,
    base: &str,
    card: &Card,
    tally: &Arc<Tally>,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<()>> {
    let mut workers = Vec::new();
    for i in 0..AGENT_WORKERS {
        workers.push(tokio::spawn(agent_worker(
            client.clone(),
            base.to_owned(),
            i,
            tally.clone(),
            stop.clone(),
        )));
    }
    for i in 0..SOCKET_WORKERS {
        workers.push(tokio::spawn(socket_worker(
            client.clone(),
            base.to_owned(),
            i,
            card.clone(),
            tally.clone(),
            stop.clone(),
        )));
    }
    for _ in 0..POLL_WORKERS {
        workers.push(tokio::spawn(poll_worker(
            client.clone(),
            base.to_owned(),
            card.clone(),
            tally.clone(),
            stop.clone(),
        )));
    }
    workers
}

/// The agent's side: cached renders, updates, emits, reads.
async fn agent_worker(client: reqwest::Client, base: String, worker: usize, tally: Arc<Tally>, stop: Arc<AtomicBool>) {
    let (mut pace, mut backoff) = (pacer(AGENT_PERIOD), Backoff::new());
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        pace.tick().await;
        n += 1;
        let Some(card) = Card::render(&client, &base, &tally).await else {
            backoff.wait().await;
            continue;
        };
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
        let mut all_passed = true;
        for (tool, arguments) in steps {
            all_passed &= rpc(&client, &base, tool, arguments, &tally).await.is_some();
        }
        if all_passed {
            backoff.reset();
        } else {
            backoff.wait().await;
        }
    }
}

/// Cards opening and closing: subscribe, send an action, read its acknowledgement, go away.
async fn socket_worker(
    client: reqwest::Client,
    base: String,
    worker: usize,
    card: Card,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
) {
    let (mut pace, mut backoff) = (pacer(SOCKET_PERIOD), Backoff::new());
    // Workers count in disjoint ranges, so no action is taken for another's duplicate.
    let mut seq = worker as u64 * 1_000_000_000;
    while !stop.load(Ordering::Relaxed) {
        pace.tick().await;
        let Some(mut socket) = card.subscribe(&client, &base, &tally).await else {
            backoff.wait().await;
            continue;
        };
        seq += 1;
        let action = json!({ "type": "action", "payload": { "sessionId": card.session_id, "type": "data:submit", "payload": { "action": "ping" }, "clientSeq": seq } });
        let sent = socket
            .socket
            .send(Message::Text(action.to_string().into()))
            .await
            .is_ok();
        if sent && stored(&mut socket, seq).await {
            backoff.reset();
        } else {
            tally.failed("ws action");
            backoff.wait().await;
        }
        tally.sockets.fetch_add(1, Ordering::Relaxed);
    }
}

/// Whether the `action_stored` acknowledgement of `seq` arrives within the reply wait.
async fn stored(socket: &mut LiveClient, seq: u64) -> bool {
    let deadline = Instant::now() + REPLY_WAIT;
    while let Some(frame) = socket
        .try_recv(deadline.saturating_duration_since(Instant::now()))
        .await
    {
        if frame["payload"]["event"] == "action_stored" && frame["payload"]["clientSeq"] == seq {
            return true;
        }
    }
    false
}

/// The agent waiting for gestures: long-polls that drain what the sockets sent.
async fn poll_worker(client: reqwest::Client, base: String, card: Card, tally: Arc<Tally>, stop: Arc<AtomicBool>) {
    let (mut pace, mut backoff) = (pacer(POLL_PERIOD), Backoff::new());
    while !stop.load(Ordering::Relaxed) {
        pace.tick().await;
        let arguments = json!({ "sessionId": card.session_id, "timeout": 5 });
        if rpc(&client, &base, "svc_consume", arguments, &tally).await.is_some() {
            backoff.reset();
        } else {
            backoff.wait().await;
        }
        tally.polls.fetch_add(1, Ordering::Relaxed);
    }
}
