//! `resources/read` of a render names its document by one spelling only: the server writes an
//! epoch-pinned URI as `ui://svc/render/<sessionId>#<N>` with `N` in plain decimal (Document 1,
//! `svc_update`), and hosts echo what they were given. Another spelling of the same epoch
//! (`#01`, `#+1`) is refused exactly as a malformed URI is, so no spelling makes the server build
//! the same document again. And building a large card document (props near the 4 MiB budget,
//! compressed for a client that accepts gzip) happens off the async workers: while a burst of
//! such reads runs, `/healthz` keeps answering.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::external::gunzip;
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    another_spelling_of_an_epoch_is_refused_as_a_malformed_uri_is,
);

fn contract() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": {
        "title": { "type": "string" }, "text": { "type": "string" } } } })
}

/// `resources/read` of `uri`: HTTP status and the whole JSON-RPC answer.
async fn read(app: &TestApp, uri: &str) -> (StatusCode, Value) {
    app.rpc("resources/read", json!({ "uri": uri })).await
}

/// The document's embedded bootstrap.
fn bootstrap(answer: &Value) -> Value {
    let html = answer["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a document: {answer}"));
    let start = html.find("id=\"svc-bootstrap\">").expect("a bootstrap") + "id=\"svc-bootstrap\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

async fn another_spelling_of_an_epoch_is_refused_as_a_malformed_uri_is(app: TestApp) {
    let rendered = app
        .render("one spelling per epoch", contract(), json!({ "title": "v1" }))
        .await;
    let session = rendered["sessionId"].as_str().unwrap().to_owned();
    let updated = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;

    // What the server handed out reads as it was handed out.
    let handed_out = [
        (rendered["resourceUri"].as_str().unwrap().to_owned(), 2, "v2"),
        (updated["resourceUri"].as_str().unwrap().to_owned(), 2, "v2"),
        (format!("ui://svc/render/{session}#1"), 1, "v1"),
    ];
    assert_eq!(handed_out[1].0, format!("ui://svc/render/{session}#2"));
    for (uri, epoch, title) in &handed_out {
        let (status, answer) = read(&app, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {answer}");
        assert_eq!(answer["result"]["contents"][0]["uri"], json!(uri), "{answer}");
        let boot = bootstrap(&answer);
        assert_eq!(boot["resourceUri"], json!(uri));
        assert_eq!(
            (boot["epoch"].clone(), boot["props"]["title"].clone()),
            (json!(epoch), json!(title))
        );
    }

    let malformed = read(&app, &format!("ui://svc/render/{session}#one")).await;
    assert_eq!(malformed.0, StatusCode::OK, "a JSON-RPC error over 200");
    assert_eq!(
        malformed.1["error"],
        json!({ "code": -32002, "message": "Session not found", "data": { "code": "NOT_FOUND" } }),
        "{}",
        malformed.1
    );
    for spelling in ["01", "001", "+1", "02", "+2", "0002", "00000000001"] {
        let (status, answer) = read(&app, &format!("ui://svc/render/{session}#{spelling}")).await;
        assert_eq!(
            (status, answer["error"].clone()),
            (malformed.0, malformed.1["error"].clone()),
            "#{spelling} is not how the server writes an epoch: {answer}"
        );
    }
}

/// Characters of each large card's `text`: its props are 3 MB of JSON (within the 4 MiB budget
/// and request body), and its document about 15 MB, since each of `"<&>` is escaped twice over
/// (once for the `<script>` element, once as JSON text).
const LARGE_TEXT_CHARS: usize = 2_400_000;

/// Props whose document is costly to build and deflate but whose stored row is cheap to parse
/// and keep: one long string. (Props of many small records would also make the server parse each
/// session's row again on every read once its read cache, 32 MiB by heap weight, cannot keep them
/// all; that parse is not what this test is about.)
fn large_props(card: usize) -> Value {
    json!({ "title": format!("large card {card}"), "text": "\"<&>".repeat(LARGE_TEXT_CHARS / 4) })
}

/// Cards with large props rendered (raw requests: the harness's checks of every answer against the
/// tool's output schema would take longer than the renders).
async fn render_large_cards(app: &TestApp, count: usize) -> Vec<String> {
    let mut sessions = Vec::new();
    for card in 0..count {
        let handshake = app
            .tool_ok(
                "svc_handshake",
                json!({ "intent": "a large card", "blueprintDraft": { "contract": contract() } }),
            )
            .await;
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_render",
            "arguments": { "handshakeId": handshake["handshakeId"], "props": large_props(card) } } });
        let body = body.to_string();
        assert!(
            body.len() < 4 * 1024 * 1024,
            "within the request body limit: {}",
            body.len()
        );
        let (status, _, answer) = app.post_raw(Some(&app.bearer), body).await;
        let session = &answer["result"]["structuredContent"]["sessionId"];
        assert!(
            status == StatusCode::OK && session.is_string(),
            "{status}: {}",
            answer.to_string().chars().take(500).collect::<String>()
        );
        sessions.push(session.as_str().unwrap().to_owned());
    }
    sessions
}

/// `GET /healthz` every 50 ms from a thread and a connection of its own (no async runtime shared
/// with the server), until `stop`: how many answered, and the longest any took.
fn probe_health(addr: SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(usize, Duration)> {
    std::thread::spawn(move || {
        let (mut answered, mut longest) = (0, Duration::ZERO);
        while !stop.load(Ordering::Relaxed) {
            let asked = Instant::now();
            let mut stream = TcpStream::connect(addr).expect("connect");
            stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            let head = format!("GET /healthz HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
            stream.write_all(head.as_bytes()).unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).expect("/healthz answers");
            longest = longest.max(asked.elapsed());
            assert!(
                answer.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&answer)
            );
            answered += 1;
            std::thread::sleep(Duration::from_millis(50));
        }
        (answered, longest)
    })
}

/// What one read brought back, undecoded.
struct Raw {
    status: StatusCode,
    gzipped: bool,
    body: bytes::Bytes,
}

impl Raw {
    fn answer(&self) -> Value {
        let text = if self.gzipped {
            gunzip(&self.body)
        } else {
            self.body.to_vec()
        };
        serde_json::from_slice(&text).expect("a JSON answer")
    }
}

/// A render's document read with `Accept-Encoding: accept_encoding`.
async fn read_encoded(client: &reqwest::Client, app: &Target, uri: &str, accept_encoding: &str) -> Raw {
    let message = json!({ "jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": { "uri": uri } });
    let response = client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&app.bearer)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("accept-encoding", accept_encoding)
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let gzipped = response
        .headers()
        .get("content-encoding")
        .is_some_and(|coding| coding == "gzip");
    Raw {
        status,
        gzipped,
        body: response.bytes().await.unwrap(),
    }
}

/// Where the reads go.
#[derive(Clone)]
struct Target {
    base: String,
    bearer: String,
}

/// Every session's document read at once, twice gzipped and once not (readers of one key wait
/// for one build), from a thread and a runtime of their own: the server's two workers run nothing
/// of the client's.
fn read_all_at_once(target: Target, sessions: Vec<String>) -> std::thread::JoinHandle<Vec<(String, Raw)>> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = reqwest::Client::new();
            let reads = sessions.iter().flat_map(|session| {
                ["gzip", "gzip", "identity"].map(|coding| {
                    let (client, target) = (&client, &target);
                    async move {
                        let uri = format!("ui://svc/render/{session}");
                        (session.clone(), read_encoded(client, target, &uri, coding).await)
                    }
                })
            });
            futures_util::future::join_all(reads).await
        })
    })
}

/// Cards whose documents are read at once, each for the first time. Before the documents were built
/// off the workers, each cost a worker most of a second (unoptimised build), and together they
/// held both of this test's two workers for several seconds. (Ten sessions of these props fit in
/// the server's read cache.)
const LARGE_CARDS: usize = 10;
/// How long `/healthz` may take while they are built. Generous: this machine's two cores also run
/// the builds (two CPU slots), this test's client, and whatever other tests of the binary run
/// alongside, so this bounds the workers' stall, not the machine's headroom (0.16 s to 1.8 s
/// after the change, 10 s to 13 s before).
const HEALTH_WITHIN: Duration = Duration::from_secs(5);

/// Two workers, as the server has on a two-core machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_document_builds_leave_healthz_answering() {
    let app = TestApp::spawn("resource_read_keys_health", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite is always available");
    let sessions = render_large_cards(&app, LARGE_CARDS).await;
    // The first read of a session just written parses its stored row (a large one on the CPU
    // gate, once per write: `svc-sql`'s `session_large_rows` tests; not what this test is
    // about). Read each once for an epoch it does not have, which reads the session and
    // answers "not found" without building a document.
    for session in &sessions {
        let (_, answer) = read(&app, &format!("ui://svc/render/{session}#2")).await;
        assert_eq!(answer["error"]["code"], -32002, "{answer}");
    }
    let addr: SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let probe = probe_health(addr, stop.clone());
    let target = Target {
        base: app.base.clone(),
        bearer: app.bearer.clone(),
    };
    let reads = read_all_at_once(target.clone(), sessions.clone());
    let answers = tokio::task::spawn_blocking(move || reads.join().expect("the reads' thread"))
        .await
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let (probes, longest) = probe.join().expect("the probe thread");

    let mut served = 0;
    for (session, raw) in &answers {
        let answer = raw.answer();
        if raw.status == StatusCode::SERVICE_UNAVAILABLE {
            // More heavy work than CPU slots for it: refused, to be retried.
            assert_eq!(answer["error"]["data"]["code"], "SERVER_BUSY", "{answer}");
            continue;
        }
        assert_eq!(raw.status, StatusCode::OK, "{answer}");
        let boot = bootstrap(&answer);
        assert_eq!(boot["sessionId"], json!(session));
        assert_eq!(boot["props"]["text"].as_str().map(str::len), Some(LARGE_TEXT_CHARS));
        served += 1;
    }
    eprintln!(
        "/healthz within {longest:?} ({probes} probes); {served} of {} reads served",
        answers.len()
    );
    assert!(served > 0, "some of the reads are served");
    assert!(probes > 0, "/healthz was asked while the documents were built");
    assert!(
        longest < HEALTH_WITHIN,
        "/healthz took {longest:?} while {} large documents were read ({served} served, {probes} probes)",
        answers.len()
    );
    // The slots free again: every document is served now.
    let client = reqwest::Client::new();
    for session in &sessions {
        let raw = read_encoded(&client, &target, &format!("ui://svc/render/{session}"), "gzip").await;
        assert_eq!(raw.status, StatusCode::OK, "{}", raw.answer()["error"]);
    }
}
