//! Durability: a server killed with SIGKILL in the middle of writes loses no acknowledged row
//! (nor the activity time a read reported);
//! one stopped with SIGTERM answers its long-polls, finishes its requests and closes its live
//! sockets first.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::process::ServerProcess;
use svc_tests::{Backend, ScratchDatabase, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

/// A tool call's whole `result` (content, structuredContent, `_meta`).
async fn call_result(client: &reqwest::Client, base: &str, tool: &str, arguments: Value) -> Option<Value> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let resp = client
        .post(format!("{base}/mcp"))
        .bearer_auth("dev")
        .json(&body)
        .send()
        .await
        .ok()?;
    let mut json: Value = resp.json().await.ok()?;
    Some(json["result"].take())
}

async fn call(client: &reqwest::Client, base: &str, tool: &str, arguments: Value) -> Option<Value> {
    let result = call_result(client, base, tool, arguments).await?;
    result["structuredContent"]
        .as_object()
        .map(|o| Value::Object(o.clone()))
}

/// Handshakes and renders an empty-contract card; the render's whole result.
async fn render_card(client: &reqwest::Client, base: &str, intent: &str) -> Value {
    let hs = call(
        client,
        base,
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": {} } }),
    )
    .await
    .unwrap();
    call_result(
        client,
        base,
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": {} }),
    )
    .await
    .unwrap()
}

/// Renders then updates, recording every write the server acknowledged.
async fn writer(client: reqwest::Client, base: String, acked: tokio::sync::mpsc::UnboundedSender<(String, u64)>) {
    loop {
        let Some(hs) = call(&client, &base, "svc_handshake", json!({ "intent": "crash test", "blueprintDraft": { "contract": { "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" } } } } } })).await else { return };
        let Some(r) = call(
            &client,
            &base,
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "n": 0 } }),
        )
        .await
        else {
            return;
        };
        let session = r["sessionId"].as_str().unwrap_or_default().to_owned();
        if acked.send((session.clone(), 1)).is_err() {
            return;
        }
        for n in 1..5 {
            let Some(u) = call(
                &client,
                &base,
                "svc_update",
                json!({ "sessionId": session, "kind": "replace", "props": { "n": n } }),
            )
            .await
            else {
                return;
            };
            if acked.send((session.clone(), u["epoch"].as_u64().unwrap_or(0))).is_err() {
                return;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_writes_loses_no_acknowledged_row() {
    sigkill_during_writes(temp_dir("svc-crash"), &["--dev-allow-all"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_writes_loses_no_acknowledged_row_on_mariadb() {
    let data_dir = temp_dir("svc-crash-mariadb");
    let Some(database) = ScratchDatabase::create("sigkill_on_mariadb", Backend::Mariadb, &data_dir).await else {
        return;
    };
    sigkill_during_writes(data_dir, &["--dev-allow-all", "--database-url", &database.url]).await;
}

/// Writers render and update until the server is killed; the restarted server has every
/// acknowledged session at its acknowledged epoch.
async fn sigkill_during_writes(data_dir: std::path::PathBuf, args: &[&str]) {
    let server = ServerProcess::start(BINARY, &data_dir, args);
    let client = reqwest::Client::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let writers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(writer(client.clone(), server.base.clone(), tx.clone())))
        .collect();
    drop(tx);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill();
    for w in writers {
        let _ = w.await;
    }
    let mut acknowledged = std::collections::HashMap::new();
    while let Some((session, epoch)) = rx.recv().await {
        let e = acknowledged.entry(session).or_insert(0);
        *e = (*e).max(epoch);
    }
    assert!(
        acknowledged.len() >= 3,
        "the writers made progress before the kill: {}",
        acknowledged.len()
    );

    let restarted = ServerProcess::start(BINARY, &data_dir, args);
    for (session, epoch) in &acknowledged {
        let got = call(
            &client,
            &restarted.base,
            "svc_get_session",
            json!({ "sessionId": session }),
        )
        .await;
        assert!(got.is_some(), "acknowledged session {session} survived");
        let read = client
            .post(format!("{}/mcp", restarted.base))
            .bearer_auth("dev")
            .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": { "uri": format!("ui://svc/render/{session}#{epoch}") } }))
            .send()
            .await
            .unwrap();
        let body: Value = read.json().await.unwrap();
        assert!(
            body["result"]["contents"].is_array(),
            "epoch {epoch} of {session} survived: {body}"
        );
    }
    drop(restarted);
    let _ = std::fs::remove_dir_all(data_dir);
}

/// `svc_get_session` reports only what is stored: after SIGKILL the restarted server lists the
/// activity time the last read reported, the heartbeat's write included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_after_reads_keeps_the_activity_time_they_reported() {
    let data_dir = temp_dir("svc-crash-heartbeat");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let client = reqwest::Client::new();
    let rendered = render_card(&client, &server.base, "heartbeat").await;
    let session = rendered["structuredContent"]["sessionId"].as_str().unwrap().to_owned();
    let read = |base: String| {
        let (client, session) = (client.clone(), session.clone());
        async move {
            let view = call(&client, &base, "svc_get_session", json!({ "sessionId": session })).await;
            view.unwrap()["lastActivityAt"].as_i64().unwrap()
        }
    };
    // Past the heartbeat's resolution the read writes its own time; reads within it write nothing.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let bumped = read(server.base.clone()).await;
    let reported = read(server.base.clone()).await;
    let moved = reported - bumped;
    assert!(moved == 0 || moved >= 1_000, "{bumped} then {reported}");
    server.kill();

    let restarted = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let listed = call(&client, &restarted.base, "svc_list_sessions", json!({}))
        .await
        .unwrap();
    let row = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["sessionId"] == session.as_str())
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    let stored = chrono::DateTime::parse_from_rfc3339(row["lastActivityAt"].as_str().unwrap()).unwrap();
    assert_eq!(
        stored.timestamp_millis(),
        reported,
        "what the read reported is what survived"
    );
    drop(restarted);
    let _ = std::fs::remove_dir_all(data_dir);
}

/// A POST to `/mcp` whose body is half sent: a request in progress for as long as the test likes.
async fn half_sent_ping(base: &str) -> (tokio::net::TcpStream, &'static [u8]) {
    use tokio::io::AsyncWriteExt;
    const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer dev\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: {}\r\n\r\n",
        BODY.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&BODY[..10]).await.unwrap();
    (stream, &BODY[10..])
}

/// On SIGTERM the held long-polls answer at once (nothing new: their clients poll again,
/// elsewhere) instead of being cut off when the grace period ends; a request in progress is
/// finished, and meanwhile the server is not ready and takes no new work; then it exits cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_in_flight_requests_then_exits_cleanly() {
    sigterm_finishes_in_flight_requests(temp_dir("svc-term"), &["--dev-allow-all"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_in_flight_requests_then_exits_cleanly_on_postgres() {
    let data_dir = temp_dir("svc-term-pg");
    let test = "sigterm_finishes_in_flight_requests_then_exits_cleanly_on_postgres";
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &data_dir).await else {
        return;
    };
    sigterm_finishes_in_flight_requests(data_dir, &["--dev-allow-all", "--database-url", &database.url]).await;
}

async fn sigterm_finishes_in_flight_requests(data_dir: std::path::PathBuf, args: &[&str]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = ServerProcess::start(BINARY, &data_dir, args);
    let client = reqwest::Client::new();
    let rendered = render_card(&client, &server.base, "term").await;
    let session = rendered["structuredContent"]["sessionId"].clone();
    let slice = &rendered["_meta"]["ai.svc/render"];
    // Both outlast the 10 s grace period unless shutdown answers them.
    let consume = {
        let (client, base, session) = (client.clone(), server.base.clone(), session.clone());
        tokio::spawn(async move {
            call(
                &client,
                &base,
                "svc_consume",
                json!({ "sessionId": session, "timeout": 25 }),
            )
            .await
        })
    };
    let poll = {
        // The first poll answers at once (the ack); the next, with its cursors, waits.
        let poll_url = format!(
            "{}?token={}",
            slice["pollingUrl"].as_str().unwrap(),
            slice["wsToken"].as_str().unwrap()
        );
        let first: Value = client
            .get(format!("{poll_url}&wait=0"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let cursors = &first["cursors"];
        let url = format!(
            "{poll_url}&wait=25&revision={}&fromSeq={}&sinceSequence={}",
            cursors["revision"], cursors["lastStreamSeq"], cursors["lastSequence"]
        );
        let client = client.clone();
        tokio::spawn(async move { client.get(url).send().await.ok()?.json::<Value>().await.ok() })
    };
    let (mut in_progress, rest) = half_sent_ping(&server.base).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !consume.is_finished() && !poll.is_finished(),
        "both are held before the shutdown"
    );
    let started = std::time::Instant::now();
    server.send_term();

    let answered = tokio::time::timeout(Duration::from_secs(5), consume)
        .await
        .expect("the held svc_consume answers as the drain begins")
        .unwrap()
        .expect("an answer, not a cut-off");
    assert_eq!(answered["events"], json!([]), "{answered}");
    assert_eq!(answered["status"], "active", "{answered}");
    let polled = tokio::time::timeout(Duration::from_secs(5), poll)
        .await
        .expect("the held polling GET answers as the drain begins")
        .unwrap()
        .expect("an answer, not a cut-off");
    assert_eq!(polled["frames"], json!([]), "{polled}");

    // The half-sent request holds shutdown open: a load balancer's probe now hears "not ready",
    // and new connections get no work. (Fresh connections: the idle pooled ones were closed.)
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let ready = client.get(format!("{}/readyz", server.base)).send().await.unwrap();
    assert_eq!(ready.status(), 503, "readyz during the grace period");
    let health = client.get(format!("{}/healthz", server.base)).send().await.unwrap();
    assert_eq!(health.status(), 200, "healthz during the grace period");
    let work = client
        .post(format!("{}/mcp", server.base))
        .bearer_auth("dev")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(work.status(), 503, "no new work during the grace period");

    in_progress.write_all(rest).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), in_progress.read_to_end(&mut response))
        .await
        .expect("the request in progress is answered, then its connection closed")
        .unwrap();
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""id":5"#), "{response}");

    let status = tokio::task::spawn_blocking(move || server.exit_within(Duration::from_secs(12)))
        .await
        .unwrap()
        .expect("exited within the grace period");
    assert!(status.success(), "exit status {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "shut down within the grace period"
    );
    let _ = std::fs::remove_dir_all(data_dir);
}

/// A card's live socket hears 1001 "going away" when the server shuts down (so it reconnects,
/// to another replica behind a proxy), and the server still exits cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_live_sockets_with_going_away() {
    sigterm_closes_live_sockets(temp_dir("svc-term-live"), &["--dev-allow-all"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_live_sockets_with_going_away_on_postgres() {
    let data_dir = temp_dir("svc-term-live-pg");
    let test = "sigterm_closes_live_sockets_with_going_away_on_postgres";
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &data_dir).await else {
        return;
    };
    sigterm_closes_live_sockets(data_dir, &["--dev-allow-all", "--database-url", &database.url]).await;
}

async fn sigterm_closes_live_sockets(data_dir: std::path::PathBuf, args: &[&str]) {
    let server = ServerProcess::start(BINARY, &data_dir, args);
    let client = reqwest::Client::new();
    let rendered = render_card(&client, &server.base, "term live").await;
    let slice = &rendered["_meta"]["ai.svc/render"];
    let mut socket = svc_tests::live::LiveClient::connect(&server.base).await;
    socket
        .send(
            "subscribe",
            json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] }),
        )
        .await;
    socket.expect("ack").await;
    server.send_term();
    let closed = socket.try_recv(Duration::from_secs(5)).await;
    assert_eq!(
        closed,
        Some(json!({ "type": "_closed", "payload": 1001 })),
        "the socket is closed with 1001 going away"
    );
    let status = tokio::task::spawn_blocking(move || server.exit_within(Duration::from_secs(12)))
        .await
        .unwrap()
        .expect("exited within the grace period");
    assert!(status.success(), "exit status {status:?}");
    let _ = std::fs::remove_dir_all(data_dir);
}

/// An idle server ends on SIGTERM with status 0 well within the grace period (10 s), on either
/// backend; on PostgreSQL the live bus's listener must let the pool close.
async fn sigterm_ends_an_idle_server(data_dir: std::path::PathBuf, extra: &[&str]) {
    let server = ServerProcess::start(BINARY, &data_dir, extra);
    let client = reqwest::Client::new();
    let ready = svc_tests::readiness_within(&client, &server.base, Duration::from_secs(10)).await;
    assert_eq!(ready, 200);
    server.send_term();
    let status = tokio::task::spawn_blocking(move || server.exit_within(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("exited within the grace period");
    assert!(status.success(), "exit status {status:?}");
    let _ = std::fs::remove_dir_all(data_dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_an_idle_server_on_sqlite() {
    sigterm_ends_an_idle_server(temp_dir("svc-term-idle"), &["--dev-allow-all"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_an_idle_server_on_postgres() {
    sigterm_ends_an_idle_server_on(Backend::Postgres, "sigterm_ends_an_idle_server_on_postgres").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_an_idle_server_on_mariadb() {
    sigterm_ends_an_idle_server_on(Backend::Mariadb, "sigterm_ends_an_idle_server_on_mariadb").await;
}

async fn sigterm_ends_an_idle_server_on(backend: Backend, test: &str) {
    let data_dir = temp_dir("svc-term-idle-server");
    let Some(database) = ScratchDatabase::create(test, backend, &data_dir).await else {
        return;
    };
    sigterm_ends_an_idle_server(data_dir, &["--dev-allow-all", "--database-url", &database.url]).await;
}
