//! Tool channels on `/ws`: `channel_subscribe` of a `streamSpec[*].source.tool` channel makes the
//! server poll the tool (an operator-declared HTTP data source on loopback, or the built-in
//! `svc_get_session`) and send `channel_payload` when the result changed, or `channel_error`.
//! On SQLite and PostgreSQL.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use svc::settings::PollToolSettings;
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Interval the contract asks for (the smallest a contract may declare).
const INTERVAL_MS: u64 = 250;

/// A loopback HTTP data source; counts the GETs of every path.
struct DataSource {
    base: String,
    hits: Arc<std::sync::Mutex<HashMap<String, Arc<AtomicUsize>>>>,
    headers: Arc<std::sync::Mutex<Vec<String>>>,
}

impl DataSource {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let hits: Arc<std::sync::Mutex<HashMap<String, Arc<AtomicUsize>>>> = Arc::default();
        let headers: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let (h, seen) = (hits.clone(), headers.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let (h, seen) = (h.clone(), seen.clone());
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&request).to_string();
                    let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let counter = h.lock().unwrap().entry(path.clone()).or_default().clone();
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    seen.lock().unwrap().push(text.to_ascii_lowercase());
                    let (status, body) = match path.as_str() {
                        "/counter" => ("200 OK", json!({ "n": n }).to_string()),
                        "/static" => ("200 OK", json!({ "build": "green" }).to_string()),
                        "/fail" => ("500 Internal Server Error", "{}".to_owned()),
                        "/text" => ("200 OK", "not json".to_owned()),
                        "/big" => ("200 OK", json!({ "blob": "x".repeat(4096) }).to_string()),
                        "/slow" => {
                            tokio::time::sleep(Duration::from_secs(3)).await;
                            ("200 OK", "{}".to_owned())
                        }
                        _ => ("404 Not Found", "{}".to_owned()),
                    };
                    let response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self { base, hits, headers }
    }

    fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .unwrap()
            .get(path)
            .map_or(0, |c| c.load(Ordering::SeqCst))
    }

    fn tool(&self, name: &str, path: &str) -> PollToolSettings {
        PollToolSettings {
            name: name.into(),
            url: format!("{}{path}", self.base),
            interval_ms: 100,
            timeout_ms: None,
        }
    }
}

async fn app_with(source: &DataSource, test: &str, per_socket: usize, backend: Backend) -> Option<TestApp> {
    let mut tools = vec![
        source.tool("counter", "/counter"),
        source.tool("build_status", "/static"),
        source.tool("failing", "/fail"),
        source.tool("texty", "/text"),
        source.tool("big", "/big"),
        source.tool("missing", "/nothing-here"),
    ];
    let mut slow = source.tool("slow", "/slow");
    slow.timeout_ms = Some(300);
    tools.push(slow);
    TestApp::spawn_configured(test, backend, Auth::DevAllowAll, move |s| {
        s.live.tool_channel_min_interval_ms = 100;
        s.live.tool_channels_per_socket = per_socket;
        s.live.tool_channel_max_payload_bytes = 1024;
        s.live.poll_tools = tools;
    })
    .await
}

fn sourced(tool: &str) -> Value {
    json!({ "mode": "replace", "schema": {}, "source": { "tool": tool, "intervalMs": INTERVAL_MS } })
}

fn contract() -> Value {
    let mut streams = json!({ "log": { "mode": "append", "schema": { "type": "string" } } });
    for (channel, tool) in [
        ("ticks", "counter"),
        ("build", "build_status"),
        ("broken", "failing"),
        ("prose", "texty"),
        ("huge", "big"),
        ("gone", "missing"),
        ("sluggish", "slow"),
        ("session", "svc_get_session"),
        ("elsewhere", "not_a_pollable_tool"),
    ] {
        streams[channel] = sourced(tool);
    }
    // The build source answers `{ build: "green" }`, which this channel's schema does not allow.
    streams["mistyped"] = json!({
        "mode": "replace",
        "schema": { "type": "object", "properties": { "count": { "type": "integer" } }, "required": ["count"] },
        "source": { "tool": "build_status", "intervalMs": INTERVAL_MS }
    });
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "ping": {} },
        "streamSpec": streams,
    })
}

async fn subscribed_card(app: &TestApp) -> (String, LiveClient) {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "tool channels", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    assert!(slice["wsToken"].is_string(), "rendered: {body}");
    let session = slice["sessionId"].as_str().unwrap().to_owned();
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": slice["wsToken"] }),
    )
    .await;
    ws.expect("ack").await;
    (session, ws)
}

/// The next frame that is not a lifecycle `data` frame.
async fn next_channel_frame(ws: &mut LiveClient, wait: Duration) -> Option<Value> {
    loop {
        let frame = ws.try_recv(wait).await?;
        if frame["type"] != "data" {
            return Some(frame);
        }
    }
}

async fn expect_channel_frame(ws: &mut LiveClient, kind: &str) -> Value {
    let frame = next_channel_frame(ws, Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("no {kind} within 5 s"));
    assert_eq!(frame["type"], kind, "expected {kind}, got {frame}");
    frame["payload"].clone()
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(3 * INTERVAL_MS)).await;
}

async fn a_polled_source_sends_changes_and_stops_on_unsubscribe_and_close(backend: Backend) {
    let source = DataSource::start().await;
    let Some(app) = app_with(&source, "tool_channels_poll", 8, backend).await else {
        return;
    };
    let (session, mut ws) = subscribed_card(&app).await;

    ws.send("channel_subscribe", json!("ticks")).await;
    let first = expect_channel_frame(&mut ws, "channel_payload").await;
    assert_eq!(first["channel"], "ticks");
    assert_eq!(first["tool"], "counter");
    assert_eq!(first["seq"], 1);
    assert_eq!(first["payload"], json!({ "n": 1 }), "the first poll runs at once");
    let second = expect_channel_frame(&mut ws, "channel_payload").await;
    assert_eq!(second["seq"], 2);
    assert_eq!(second["payload"], json!({ "n": 2 }));
    {
        let seen = source.headers.lock().unwrap();
        assert!(
            seen.iter()
                .any(|r| r.contains(&format!("x-svc-session-id: {session}")) && r.contains("x-svc-channel: ticks")),
            "the source is told which card it is polled for"
        );
    }
    // The interval is the contract's 250 ms: about 4 polls a second, not one per 100 ms.
    let before = source.hits("/counter");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let polled = source.hits("/counter") - before;
    assert!((2..=6).contains(&polled), "{polled} polls in one second at 250 ms");

    // Subscribing again changes nothing; unsubscribing stops the poller, twice is fine.
    ws.send("channel_subscribe", json!("ticks")).await;
    ws.send("channel_unsubscribe", json!("ticks")).await;
    ws.send("channel_unsubscribe", json!({ "channel": "ticks" })).await;
    ws.send("channel_unsubscribe", json!("never-subscribed")).await;
    settle().await;
    let stopped_at = source.hits("/counter");
    while let Some(frame) = next_channel_frame(&mut ws, Duration::from_millis(100)).await {
        assert_eq!(frame["type"], "channel_payload", "only queued payloads: {frame}");
    }
    settle().await;
    assert_eq!(source.hits("/counter"), stopped_at, "no poll after unsubscribe");
    ws.send("ping", Value::Null).await;
    assert_eq!(ws.recv().await["type"], "pong", "the socket is fine");

    // An unchanged result is sent once, although it is polled on.
    ws.send("channel_subscribe", json!("build")).await;
    let build = expect_channel_frame(&mut ws, "channel_payload").await;
    assert_eq!(build["payload"], json!({ "build": "green" }));
    let polls = source.hits("/static");
    assert!(
        next_channel_frame(&mut ws, Duration::from_millis(4 * INTERVAL_MS))
            .await
            .is_none(),
        "unchanged results are not sent again"
    );
    assert!(source.hits("/static") >= polls + 2, "yet the source was polled");

    // Closing the socket stops its pollers.
    ws.send("channel_subscribe", json!("ticks")).await;
    expect_channel_frame(&mut ws, "channel_payload").await;
    drop(ws);
    settle().await;
    let (ticks, builds) = (source.hits("/counter"), source.hits("/static"));
    tokio::time::sleep(Duration::from_millis(5 * INTERVAL_MS)).await;
    assert_eq!(source.hits("/counter"), ticks, "no poll after the socket closed");
    assert_eq!(source.hits("/static"), builds, "no poll after the socket closed");
}

async fn failures_are_channel_errors_with_their_codes(backend: Backend) {
    let source = DataSource::start().await;
    let Some(app) = app_with(&source, "tool_channels_errors", 3, backend).await else {
        return;
    };
    let (_, mut ws) = subscribed_card(&app).await;
    for (channel, code) in [
        ("broken", "POLL_FAILED"),
        ("gone", "POLL_FAILED"),
        ("prose", "BAD_PAYLOAD"),
        ("mistyped", "BAD_PAYLOAD"),
        ("huge", "PAYLOAD_TOO_LARGE"),
        ("sluggish", "POLL_TIMEOUT"),
        ("elsewhere", "TOOL_UNAVAILABLE"),
        ("log", "UNKNOWN_CHANNEL"),
        ("not-in-the-contract", "UNKNOWN_CHANNEL"),
    ] {
        ws.send("channel_subscribe", json!(channel)).await;
        let error = expect_channel_frame(&mut ws, "channel_error").await;
        assert_eq!(error["channel"], channel, "{error}");
        assert_eq!(error["code"], code, "{channel}: {error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
        if channel == "mistyped" {
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("streamSpec.mistyped.schema") && message.contains("count"),
                "a schema violation names the channel's schema and the rule: {message}"
            );
        }
        ws.send("channel_unsubscribe", json!(channel)).await;
    }
    // A failing source is polled on, but the same error is reported once.
    ws.send("channel_subscribe", json!("broken")).await;
    assert_eq!(
        expect_channel_frame(&mut ws, "channel_error").await["code"],
        "POLL_FAILED"
    );
    let polls = source.hits("/fail");
    assert!(
        next_channel_frame(&mut ws, Duration::from_millis(4 * INTERVAL_MS))
            .await
            .is_none()
    );
    assert!(source.hits("/fail") >= polls + 2);

    // Three channels per socket in this deployment.
    ws.send("channel_subscribe", json!("ticks")).await;
    expect_channel_frame(&mut ws, "channel_payload").await;
    ws.send("channel_subscribe", json!("build")).await;
    let mut fourth = None;
    ws.send("channel_subscribe", json!("session")).await;
    for _ in 0..20 {
        let frame = next_channel_frame(&mut ws, Duration::from_secs(5))
            .await
            .expect("a frame");
        if frame["type"] == "channel_error" {
            fourth = Some(frame["payload"].clone());
            break;
        }
    }
    let fourth = fourth.expect("the fourth channel is refused");
    assert_eq!(fourth["code"], "TOO_MANY_CHANNELS");
    assert_eq!(fourth["channel"], "session");

    // channel frames before subscribe are refused like every other frame.
    let mut fresh = LiveClient::connect(&app.base).await;
    fresh.send("channel_subscribe", json!("ticks")).await;
    assert_eq!(fresh.expect("error").await["code"], "NOT_SUBSCRIBED");
}

async fn the_session_projection_is_a_pollable_tool(backend: Backend) {
    let source = DataSource::start().await;
    let Some(app) = app_with(&source, "tool_channels_session", 8, backend).await else {
        return;
    };
    let (session, mut ws) = subscribed_card(&app).await;
    ws.send("channel_subscribe", json!("session")).await;
    let first = expect_channel_frame(&mut ws, "channel_payload").await;
    assert_eq!(first["tool"], "svc_get_session");
    assert_eq!(first["payload"]["id"], session.as_str());
    assert_eq!(first["payload"]["eventSequence"], 0);

    ws.send(
        "action",
        json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "ping" }, "clientSeq": 1 }),
    )
    .await;
    let mut changed = None;
    for _ in 0..10 {
        let frame = next_channel_frame(&mut ws, Duration::from_secs(5))
            .await
            .expect("a frame");
        if frame["type"] == "channel_payload" {
            changed = Some(frame["payload"].clone());
            break;
        }
    }
    let changed = changed.expect("a changed projection");
    assert_eq!(changed["seq"], 2);
    assert_eq!(changed["payload"]["eventSequence"], 1);
    settle().await;
    let read = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(
        changed["payload"]["createdAt"], read["createdAt"],
        "the same projection as the tool"
    );
}

async fn an_expired_session_ends_its_tool_channel(backend: Backend) {
    let Some(app) = TestApp::spawn_configured("tool_channels_expiry", backend, Auth::DevAllowAll, |s| {
        s.live.tool_channel_min_interval_ms = 100;
        s.sessions.default_ttl_seconds = 2;
    })
    .await
    else {
        return;
    };
    let (_, mut ws) = subscribed_card(&app).await;
    ws.send("channel_subscribe", json!("session")).await;
    assert_eq!(
        expect_channel_frame(&mut ws, "channel_payload").await["tool"],
        "svc_get_session"
    );
    let mut ended = None;
    for _ in 0..20 {
        let frame = next_channel_frame(&mut ws, Duration::from_secs(5))
            .await
            .expect("a frame");
        if frame["type"] == "channel_error" {
            ended = Some(frame["payload"].clone());
            break;
        }
    }
    let ended = ended.expect("the channel reports the expiry");
    assert_eq!(ended["code"], "SESSION_EXPIRED");
    assert_eq!(ended["channel"], "session");
    assert!(
        next_channel_frame(&mut ws, Duration::from_millis(6 * INTERVAL_MS))
            .await
            .is_none(),
        "nothing more on the channel"
    );
}

/// A card that unsubscribes and subscribes again at once (or binds the socket again) does not
/// poll the source sooner than one interval after the last poller started.
async fn subscribing_again_and_again_polls_no_faster_than_the_interval(backend: Backend) {
    let source = DataSource::start().await;
    let Some(app) = app_with(&source, "tool_channels_pacing", 8, backend).await else {
        return;
    };
    let (session, mut ws) = subscribed_card(&app).await;
    let window = Duration::from_millis(2 * INTERVAL_MS + INTERVAL_MS / 2);

    let started = tokio::time::Instant::now();
    for _ in 0..20 {
        ws.send("channel_subscribe", json!("ticks")).await;
        ws.send("channel_unsubscribe", json!("ticks")).await;
    }
    ws.send("channel_subscribe", json!("ticks")).await;
    tokio::time::sleep_until(started + window).await;
    let polled = source.hits("/counter");
    assert!(
        (1..=3).contains(&polled),
        "{polled} polls in {window:?} at {INTERVAL_MS} ms"
    );

    // A new binding of the socket (another `subscribe`) keeps the pacing.
    let token = app
        .tool_ok("svc_runtime_refresh_ws_token", json!({ "sessionId": session }))
        .await["wsToken"]
        .clone();
    let before = source.hits("/counter");
    let started = tokio::time::Instant::now();
    for _ in 0..10 {
        ws.send("subscribe", json!({ "sessionId": session, "wsToken": token }))
            .await;
        ws.send("channel_subscribe", json!("ticks")).await;
    }
    tokio::time::sleep_until(started + window).await;
    let polled = source.hits("/counter") - before;
    assert!(
        (1..=3).contains(&polled),
        "{polled} polls in {window:?} across new bindings"
    );
}

svc_tests::on_both_backends!(
    subscribing_again_and_again_polls_no_faster_than_the_interval,
    a_polled_source_sends_changes_and_stops_on_unsubscribe_and_close,
    failures_are_channel_errors_with_their_codes,
    the_session_projection_is_a_pollable_tool,
    an_expired_session_ends_its_tool_channel,
);
