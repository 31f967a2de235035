//! A fake model provider on loopback for tests and benchmarks: one server answering all four wire
//! formats on their real paths (`/chat/completions`, `/v1/messages`,
//! `/v1beta/models/{m}:streamGenerateContent`, `/api/chat`), streaming scripted replies the way
//! each provider streams them. Replies are taken from a queue, one per request; an empty queue
//! repeats the default reply.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use poem::http::StatusCode;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::Data;
use poem::{Body, EndpointExt, Request, Response, Route, Server, handler, post};
use serde_json::{Value, json};
use tokio::sync::watch;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum FakeReply {
    /// A 200 streaming `text` in the wire format of the path hit, split into `chunk_chars` pieces.
    Text { text: String, chunk_chars: usize },
    /// The same stream cut off before the provider's end marker.
    Truncated { text: String },
    /// A non-streaming answer: status, extra headers and body.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A 200 whose body is exactly these chunks (recorded fixtures, malformed streams).
    Raw { content_type: String, chunks: Vec<String> },
    /// A 200 that sends its first frame and then nothing, ever.
    Stall,
    /// A hostile answer: `status` with `prefix`, then `chunk` again and again until `total_bytes`
    /// were offered, then `suffix`. Every byte handed to the connection is counted
    /// ([`FakeProvider::sent_bytes`]), so a test sees how much a client read before hanging up.
    Flood {
        status: u16,
        content_type: String,
        prefix: String,
        chunk: String,
        total_bytes: usize,
        suffix: String,
    },
}

impl FakeReply {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            chunk_chars: 24,
        }
    }

    /// A component in a ```tsx block, as models write it.
    pub fn component(tsx: &str) -> Self {
        Self::text(format!("Here is the card.\n\n```tsx\n{tsx}\n```\n"))
    }

    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Self::Status {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Status { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    pub fn sse(body: &str) -> Self {
        Self::Raw {
            content_type: "text/event-stream".into(),
            chunks: vec![body.to_owned()],
        }
    }

    pub fn ndjson(body: &str) -> Self {
        Self::Raw {
            content_type: "application/x-ndjson".into(),
            chunks: vec![body.to_owned()],
        }
    }
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub path: String,
    pub query: String,
    /// `authorization`, `x-api-key` or `x-goog-api-key`, whichever came.
    pub credential: Option<String>,
    pub anthropic_version: Option<String>,
    pub body: Value,
    /// When the request's body had been read.
    pub received_at: std::time::Instant,
}

struct State {
    replies: Mutex<VecDeque<FakeReply>>,
    default_reply: Mutex<FakeReply>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Reply bodies being streamed right now; a client that hangs up drops its body.
    open_streams: AtomicUsize,
    /// While `true`, replies wait before their first byte.
    paused: watch::Sender<bool>,
    chunk_delay: Mutex<Duration>,
    /// Bytes of `Flood` bodies handed to the connection.
    sent_bytes: AtomicUsize,
}

/// The running fake; stops when dropped.
pub struct FakeProvider {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    state: Arc<State>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeProvider {
    pub async fn start() -> Self {
        let state = Arc::new(State {
            replies: Mutex::new(VecDeque::new()),
            default_reply: Mutex::new(FakeReply::text("no reply scripted")),
            requests: Mutex::new(Vec::new()),
            open_streams: AtomicUsize::new(0),
            paused: watch::channel(false).0,
            chunk_delay: Mutex::new(Duration::ZERO),
            sent_bytes: AtomicUsize::new(0),
        });
        let acceptor = TcpListener::bind("127.0.0.1:0")
            .into_acceptor()
            .await
            .expect("bind loopback");
        let port = acceptor
            .local_addr()
            .first()
            .and_then(|a| a.as_socket_addr().map(|s| s.port()))
            .expect("local port");
        let app = Route::new().at("/*path", post(respond)).data(state.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = Server::new_with_acceptor(acceptor)
                .run_with_graceful_shutdown(
                    app,
                    async move {
                        let _ = rx.await;
                    },
                    Some(Duration::from_millis(100)),
                )
                .await;
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}"),
            state,
            _shutdown: tx,
        }
    }

    /// Queues replies, answered in order.
    pub fn push(&self, reply: FakeReply) {
        self.state.replies.lock().unwrap().push_back(reply);
    }

    /// The reply once the queue is empty.
    pub fn set_default(&self, reply: FakeReply) {
        *self.state.default_reply.lock().unwrap() = reply;
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// Reply bodies still being streamed (a cancelled client's body is dropped, not counted).
    pub fn open_streams(&self) -> usize {
        self.state.open_streams.load(Ordering::SeqCst)
    }

    /// Bytes of `Flood` bodies handed to the connection so far.
    pub fn sent_bytes(&self) -> usize {
        self.state.sent_bytes.load(Ordering::SeqCst)
    }

    /// Waits until every reply body was finished or dropped (or panics after 10 s).
    pub async fn wait_for_closed_streams(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.open_streams() > 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} reply streams still open",
                self.open_streams()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Holds every reply before its first byte until [`FakeProvider::resume`].
    pub fn pause(&self) {
        self.state.paused.send_replace(true);
    }

    pub fn resume(&self) {
        self.state.paused.send_replace(false);
    }

    /// Sleep between two streamed chunks.
    pub fn set_chunk_delay(&self, delay: Duration) {
        *self.state.chunk_delay.lock().unwrap() = delay;
    }

    /// Waits until `n` requests arrived (or panics after 10 s).
    pub async fn wait_for_requests(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.request_count() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the fake got {} of {n} requests",
                self.request_count()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum WireKind {
    OpenAi,
    Anthropic,
    Gemini,
    Ollama,
}

fn wire_of(path: &str) -> Option<WireKind> {
    if path.ends_with("/chat/completions") {
        Some(WireKind::OpenAi)
    } else if path.ends_with("/v1/messages") {
        Some(WireKind::Anthropic)
    } else if path.contains(":streamGenerateContent") {
        Some(WireKind::Gemini)
    } else if path.ends_with("/api/chat") {
        Some(WireKind::Ollama)
    } else {
        None
    }
}

#[handler]
async fn respond(req: &Request, body: Body, Data(state): Data<&Arc<State>>) -> Response {
    let path = req.uri().path().to_owned();
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body: Value = serde_json::from_slice(&body.into_vec().await.unwrap_or_default()).unwrap_or(Value::Null);
    let model = body["model"].as_str().map(str::to_owned).unwrap_or_else(|| {
        path.rsplit('/')
            .next()
            .and_then(|last| last.split(':').next())
            .unwrap_or("fake")
            .to_owned()
    });
    state.requests.lock().unwrap().push(RecordedRequest {
        path: path.clone(),
        query: req.uri().query().unwrap_or_default().to_owned(),
        credential: header("authorization")
            .or_else(|| header("x-api-key"))
            .or_else(|| header("x-goog-api-key")),
        anthropic_version: header("anthropic-version"),
        body,
        received_at: std::time::Instant::now(),
    });
    let Some(wire) = wire_of(&path) else {
        return Response::builder().status(StatusCode::NOT_FOUND).body("unknown path");
    };
    let reply = {
        let queued = state.replies.lock().unwrap().pop_front();
        queued.unwrap_or_else(|| state.default_reply.lock().unwrap().clone())
    };
    let mut paused = state.paused.subscribe();
    let _ = paused.wait_for(|p| !*p).await;
    let delay = *state.chunk_delay.lock().unwrap();
    match reply {
        FakeReply::Status { status, headers, body } => {
            let mut builder = Response::builder().status(StatusCode::from_u16(status).expect("status"));
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            builder.body(body)
        }
        FakeReply::Text { text, chunk_chars } => streaming(
            state,
            wire,
            encode(wire, &model, &text, chunk_chars, true),
            delay,
            false,
        ),
        FakeReply::Truncated { text } => streaming(state, wire, encode(wire, &model, &text, 24, false), delay, false),
        FakeReply::Raw { content_type, chunks } => Response::builder()
            .header("content-type", content_type)
            .body(Body::from_bytes_stream(guarded(state, chunks, delay, None))),
        FakeReply::Flood {
            status,
            content_type,
            prefix,
            chunk,
            total_bytes,
            suffix,
        } => Response::builder()
            .status(StatusCode::from_u16(status).expect("status"))
            .header("content-type", content_type)
            .body(Body::from_bytes_stream(flood(
                state,
                prefix,
                chunk,
                total_bytes,
                suffix,
            ))),
        FakeReply::Stall => {
            let first = encode(wire, &model, "", 24, false).into_iter().take(1).collect();
            streaming(state, wire, first, delay, true)
        }
    }
}

fn streaming(state: &Arc<State>, wire: WireKind, chunks: Vec<String>, delay: Duration, stall: bool) -> Response {
    let content_type = match wire {
        WireKind::Ollama => "application/x-ndjson",
        _ => "text/event-stream",
    };
    Response::builder()
        .header("content-type", content_type)
        .header("cache-control", "no-cache")
        .body(Body::from_bytes_stream(guarded(
            state,
            chunks,
            delay,
            stall.then_some(keep_alive(wire)),
        )))
}

fn keep_alive(wire: WireKind) -> &'static [u8] {
    match wire {
        WireKind::Ollama => b"\n",
        _ => b": keep-alive\n\n",
    }
}

/// Counts the body as open until it is dropped: finished, or abandoned by a client hanging up.
struct OpenStream(Arc<State>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::SeqCst);
    }
}

fn guarded(
    state: &Arc<State>,
    chunks: Vec<String>,
    delay: Duration,
    stall: Option<&'static [u8]>,
) -> BoxStream<'static, Result<Vec<u8>, std::io::Error>> {
    state.open_streams.fetch_add(1, Ordering::SeqCst);
    let guard = OpenStream(state.clone());
    let body = stream::iter(chunks).then(move |chunk| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Ok::<_, std::io::Error>(chunk.into_bytes())
    });
    // A stalled reply keeps the connection warm the way providers do (SSE comments, blank NDJSON
    // lines) without sending any reply data; writing is also how the fake notices a hang-up.
    let keep_alive = stream::unfold((), move |()| async move {
        let bytes = stall?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some((Ok::<_, std::io::Error>(bytes.to_vec()), ()))
    });
    let tail = stream::once(async move {
        drop(guard);
        Ok::<_, std::io::Error>(Vec::new())
    });
    body.chain(keep_alive).chain(tail).boxed()
}

/// `prefix`, `chunk` repeated up to `total_bytes`, `suffix`; counts what the connection took and
/// counts as open until dropped (finished, or abandoned by a client hanging up).
fn flood(
    state: &Arc<State>,
    prefix: String,
    chunk: String,
    total_bytes: usize,
    suffix: String,
) -> BoxStream<'static, Result<Vec<u8>, std::io::Error>> {
    state.open_streams.fetch_add(1, Ordering::SeqCst);
    let guard = Arc::new(OpenStream(state.clone()));
    let repeats = total_bytes / chunk.len().max(1);
    let parts = std::iter::once(prefix)
        .chain(std::iter::repeat_n(chunk, repeats))
        .chain(std::iter::once(suffix));
    let counted = state.clone();
    stream::iter(parts)
        .map(move |part| {
            let _open = &guard;
            counted.sent_bytes.fetch_add(part.len(), Ordering::SeqCst);
            Ok(part.into_bytes())
        })
        .boxed()
}

fn pieces(text: &str, chunk_chars: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(chunk_chars.max(1)).map(|c| c.iter().collect()).collect()
}

/// `text` as the provider streams it; without the end marker when `complete` is false.
fn encode(wire: WireKind, model: &str, text: &str, chunk_chars: usize, complete: bool) -> Vec<String> {
    let parts = pieces(text, chunk_chars);
    let sse = |value: Value| format!("data: {value}\n\n");
    let named = |event: &str, value: Value| format!("event: {event}\ndata: {value}\n\n");
    let mut out = Vec::new();
    match wire {
        WireKind::OpenAi => {
            let chunk = |delta: Value, finish: Value| {
                json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1764115200,
                        "model": model, "system_fingerprint": "fp_fake",
                        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }] })
            };
            out.push(sse(chunk(
                json!({ "role": "assistant", "content": "", "refusal": null }),
                Value::Null,
            )));
            out.extend(parts.iter().map(|p| sse(chunk(json!({ "content": p }), Value::Null))));
            if complete {
                out.push(sse(chunk(json!({}), json!("stop"))));
                out.push("data: [DONE]\n\n".into());
            }
        }
        WireKind::Anthropic => {
            out.push(named(
                "message_start",
                json!({ "type": "message_start", "message": { "id": "msg_fake", "type": "message", "role": "assistant",
                        "content": [], "model": model, "stop_reason": null, "stop_sequence": null,
                        "usage": { "input_tokens": 1200, "output_tokens": 1 } } }),
            ));
            out.push(named(
                "content_block_start",
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
            ));
            out.push(named("ping", json!({ "type": "ping" })));
            out.extend(parts.iter().map(|p| {
                named(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": p } }),
                )
            }));
            if complete {
                out.push(named(
                    "content_block_stop",
                    json!({ "type": "content_block_stop", "index": 0 }),
                ));
                out.push(named(
                    "message_delta",
                    json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn", "stop_sequence": null },
                            "usage": { "output_tokens": 300 } }),
                ));
                out.push(named("message_stop", json!({ "type": "message_stop" })));
            }
        }
        WireKind::Gemini => {
            let chunk = |text: &str, finish: bool| {
                let mut candidate = json!({ "content": { "parts": [{ "text": text }], "role": "model" }, "index": 0 });
                if finish {
                    candidate["finishReason"] = json!("STOP");
                }
                // Gemini separates events with CRLF pairs.
                format!(
                    "data: {}\r\n\r\n",
                    json!({ "candidates": [candidate],
                            "usageMetadata": { "promptTokenCount": 1200, "totalTokenCount": 1500 },
                            "modelVersion": model, "responseId": "fake" })
                )
            };
            let last = parts.len().saturating_sub(1);
            for (i, part) in parts.iter().enumerate() {
                out.push(chunk(part, complete && i == last));
            }
            if parts.is_empty() {
                out.push(chunk("", complete));
            }
        }
        WireKind::Ollama => {
            let line = |content: &str, done: bool| {
                let mut value = json!({ "model": model, "created_at": "2026-11-26T01:00:00.000000Z",
                                        "message": { "role": "assistant", "content": content }, "done": done });
                if done {
                    value["done_reason"] = json!("stop");
                    value["total_duration"] = json!(2_100_000_000u64);
                    value["eval_count"] = json!(300);
                }
                format!("{value}\n")
            };
            out.extend(parts.iter().map(|p| line(p, false)));
            if complete {
                out.push(line("", true));
            }
        }
    }
    out
}
