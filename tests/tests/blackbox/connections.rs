//! The server's own resources: slow or silent clients are disconnected after the header-read
//! and idle timeouts, and past the connection cap `/healthz` still answers while excess
//! connections are closed at once (`[connections]`, README "Configuration"). A connection
//! answered before its request body arrived (a 401) stays usable for the next request, unless the
//! unread body runs past the drain bound. HTTP/2 clients (prior knowledge, no TLS) are served,
//! several requests at once on one connection, and the host guard reads their `:authority`.
//! Loopback only, a handful of connections, small timeouts.

use std::time::{Duration, Instant};

use svc_tests::raw_http::{closed_within, dribble_until_closed, exchange};
use svc_tests::{Auth, Backend, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(configure: impl FnOnce(&mut svc::settings::ConnectionSettings)) -> TestApp {
    TestApp::spawn_configured("connections", Backend::Sqlite, Auth::DevAllowAll, |s| {
        configure(&mut s.connections)
    })
    .await
    .expect("sqlite always runs")
}

fn address(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_owned()
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_connections_are_closed_after_the_header_read_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 1;
        c.idle_timeout_seconds = 30;
    })
    .await;
    let addr = address(&app);
    let slow: Vec<_> = (0..5)
        .map(|_| {
            let addr = addr.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let mut stream = TcpStream::connect(&addr).await.unwrap();
                stream
                    .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    .await
                    .unwrap();
                dribble_until_closed(&mut stream, Duration::from_millis(200), started, Duration::from_secs(6)).await
            })
        })
        .collect();
    for task in slow {
        let closed_after = task.await.unwrap().expect("a slowloris connection was closed");
        assert!(closed_after < Duration::from_secs(4), "closed after {closed_after:?}");
    }
    // An ordinary client was never affected.
    let health = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_read_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 1;
        c.idle_timeout_seconds = 30;
    })
    .await;
    let mut silent = TcpStream::connect(address(&app)).await.unwrap();
    let (after, said) = closed_within(&mut silent, Duration::from_secs(4))
        .await
        .expect("the silent connection was closed");
    assert!(after >= Duration::from_millis(900), "not before the timeout: {after:?}");
    assert_eq!(said, "", "nothing is answered to nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_stalled_inside_the_http2_preface_is_closed_after_the_header_read_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 1;
        c.idle_timeout_seconds = 30;
    })
    .await;
    // Half of the preface: the server cannot yet tell HTTP/1 from HTTP/2.
    let mut stalled = TcpStream::connect(address(&app)).await.unwrap();
    stalled.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let (after, said) = closed_within(&mut stalled, Duration::from_secs(4))
        .await
        .expect("the stalled connection was closed");
    assert!(after >= Duration::from_millis(900), "not before the timeout: {after:?}");
    assert_eq!(said, "");
    // The preface's first bytes that then depart from it are HTTP/1, every byte kept: the
    // request is answered.
    let mut departing = TcpStream::connect(address(&app)).await.unwrap();
    departing
        .write_all(b"PRI /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (_, said) = closed_within(&mut departing, Duration::from_secs(4))
        .await
        .expect("answered and closed");
    let status = said.split(' ').nth(1).unwrap_or_default();
    assert!(said.starts_with("HTTP/1.1 "), "answered over HTTP/1.1: {said}");
    // Three or more bytes lost from the front would make the request line unreadable: 400.
    assert!(
        status != "400" && status.starts_with('4'),
        "the method is refused, not the request: {said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_head_that_began_like_the_http2_preface_is_due_within_the_header_read_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 2;
        c.idle_timeout_seconds = 30;
    })
    .await;
    let started = Instant::now();
    let mut slow = TcpStream::connect(address(&app)).await.unwrap();
    // `PRI ` is also how HTTP/2's preface begins: the server cannot tell the protocol yet.
    slow.write_all(b"PRI ").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // Now it is HTTP/1, and its head never ends.
    slow.write_all(b"/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    let closed_after = dribble_until_closed(&mut slow, Duration::from_millis(100), started, Duration::from_secs(6))
        .await
        .expect("the slow head was cut off");
    // Within the timeout of the accept (plus scheduling), not of the moment the protocol became
    // known (which would be about 3.5 s).
    assert!(
        closed_after >= Duration::from_millis(1_900) && closed_after < Duration::from_millis(3_000),
        "closed after {closed_after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 1;
    })
    .await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    assert!(
        exchange(&mut stream, &get("/healthz"))
            .await
            .starts_with("HTTP/1.1 200")
    );
    let (after, _) = closed_within(&mut stream, Duration::from_secs(4))
        .await
        .expect("the idle connection was closed");
    assert!(after >= Duration::from_millis(900), "not before the timeout: {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_probes_still_answer_and_excess_connections_are_closed() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 30;
        c.max_connections = 8;
        c.health_headroom = 2;
    })
    .await;
    let addr = address(&app);
    // Fill the cap with kept-alive connections, each known to be accepted.
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        assert!(
            exchange(&mut stream, &get("/healthz"))
                .await
                .starts_with("HTTP/1.1 200")
        );
        held.push(stream);
    }

    // The headroom answers probes, once per connection, and nothing else.
    let mut probe = TcpStream::connect(&addr).await.unwrap();
    probe.write_all(get("/healthz").as_bytes()).await.unwrap();
    let (_, said) = closed_within(&mut probe, Duration::from_secs(5))
        .await
        .expect("answered, then closed");
    assert!(said.starts_with("HTTP/1.1 200"), "{said}");
    let mut work = TcpStream::connect(&addr).await.unwrap();
    work.write_all(get("/_svc/iframe-runtime.js").as_bytes()).await.unwrap();
    let (_, said) = closed_within(&mut work, Duration::from_secs(5))
        .await
        .expect("answered, then closed");
    assert!(said.starts_with("HTTP/1.1 503"), "{said}");
    assert!(said.contains("OVERLOADED"), "{said}");

    // With the headroom taken as well, a new connection is closed at once, unanswered.
    let mut headroom = Vec::new();
    for _ in 0..2 {
        headroom.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut excess = TcpStream::connect(&addr).await.unwrap();
    let _ = excess.write_all(get("/healthz").as_bytes()).await;
    let (after, said) = closed_within(&mut excess, Duration::from_secs(2))
        .await
        .expect("the excess connection was closed");
    assert_eq!(said, "", "closed without an answer");
    assert!(after < Duration::from_secs(1), "closed promptly: {after:?}");

    // Closing connections frees their slots.
    drop((held, headroom));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let runtime = app
            .client
            .get(format!("{}/_svc/iframe-runtime.js", app.base))
            .send()
            .await;
        if runtime.is_ok_and(|r| r.status() == 200) {
            break;
        }
        assert!(Instant::now() < deadline, "slots were freed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Over HTTP/2 (no `Connection: close`), a connection admitted past the cap for the probes answers
/// one request and is then closed (GOAWAY), as an HTTP/1 one is: it cannot keep its place under
/// the headroom by asking again until its idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_probe_connection_past_the_cap_answers_once_and_closes() {
    use bytes::Bytes;
    use http_body_util::Full;
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 30;
        c.max_connections = 1;
        c.health_headroom = 1;
    })
    .await;
    let mut held = TcpStream::connect(address(&app)).await.unwrap();
    assert!(exchange(&mut held, &get("/healthz")).await.starts_with("HTTP/1.1 200"));

    let mut probe = svc_tests::h2::connect(&app.base).await;
    let healthz = || {
        hyper::Request::get(format!("{}/healthz", app.base))
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    probe.ready().await.unwrap();
    let answered = probe
        .send_request(healthz())
        .await
        .expect("the first probe is answered");
    assert_eq!(answered.status(), 200);
    drop(answered);
    let deadline = Instant::now() + Duration::from_secs(5);
    let again = loop {
        // Closed: `ready` fails; a request sent before the GOAWAY arrived is refused.
        let sent = match probe.ready().await {
            Ok(()) => probe.send_request(healthz()).await.map(|r| r.status()),
            Err(e) => Err(e),
        };
        if sent.is_err() || Instant::now() > deadline {
            break sent;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(again.is_err(), "a second request on the probe connection: {again:?}");
    drop(held);
}

/// A client that asks for more than the sockets can hold and reads none of it is cut off once the
/// server's writes have waited the idle timeout, freeing its place under the cap (before, the idle
/// timeout's graceful close waited for answers nobody read, for as long as the socket stayed
/// open). The cap here is one connection, so the next client is served only once it is freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_its_answers_is_cut_off_after_the_idle_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 2;
        c.max_connections = 1;
        c.health_headroom = 1;
    })
    .await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut reader = socket.connect(address(&app).parse().unwrap()).await.unwrap();
    // Pipelined: 300 answers of about 100 KB each, far past what the sockets buffer.
    let requests = "GET /_svc/iframe-runtime.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(300);
    reader.write_all(requests.as_bytes()).await.unwrap();
    let started = Instant::now();

    let served_beside = async || {
        let mut other = TcpStream::connect(address(&app)).await.unwrap();
        other
            .write_all(get("/_svc/iframe-runtime.js").as_bytes())
            .await
            .unwrap();
        let mut head = [0u8; 12];
        match tokio::time::timeout(Duration::from_secs(2), other.read_exact(&mut head)).await {
            Ok(Ok(_)) => String::from_utf8_lossy(&head).into_owned(),
            _ => String::new(),
        }
    };
    assert_eq!(served_beside().await, "HTTP/1.1 503", "the one slot is the reader's");
    let freed_after = loop {
        if served_beside().await == "HTTP/1.1 200" {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the reader's slot was never freed"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(
        freed_after >= Duration::from_millis(1_900),
        "not before the idle timeout: {freed_after:?}"
    );
    drop(reader);
}

/// Writes a `POST /mcp` head without a credential, then (after a pause, as a client writing its
/// head and body separately does) `body_bytes` of body.
async fn unauthorised_post_in_two_writes(stream: &mut TcpStream, body_bytes: usize) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {body_bytes}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Past the drain bound the server may close while this is still being written.
    let _ = stream.write_all(&vec![b' '; body_bytes]).await;
}

/// Reads one answer with a `Content-Length`; its head.
async fn answer_head(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .expect("a content-length");
            if rest.len() >= length {
                return head.to_owned();
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed before answering: {text}");
        seen.extend_from_slice(&buf[..n]);
    }
}

async fn strict_server() -> TestApp {
    TestApp::spawn_configured("connections-strict", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .expect("sqlite always runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_answered_before_its_body_arrived_stays_usable() {
    let app = strict_server().await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    unauthorised_post_in_two_writes(&mut stream, 300).await;
    let head = answer_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    // The next request on the same connection, as a pooling client (httpx) sends it.
    let answer = exchange(&mut stream, &get("/healthz")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_body_past_the_drain_bound_closes_the_connection() {
    let app = strict_server().await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    unauthorised_post_in_two_writes(&mut stream, 3 * 1024 * 1024).await;
    assert!(
        closed_within(&mut stream, Duration::from_secs(10)).await.is_some(),
        "the server stops reading a body of megabytes nobody asked for"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_body_that_stops_arriving_closes_the_connection_after_the_drain_time() {
    let app = strict_server().await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 300\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A third of the declared body, then nothing.
    stream.write_all(&[b' '; 100]).await.unwrap();
    let answer = answer_head(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let (after, _) = closed_within(&mut stream, Duration::from_secs(15))
        .await
        .expect("the server stops waiting for the rest");
    assert!(
        after >= Duration::from_secs(4),
        "not before the drain time (5 s): {after:?}"
    );
}

/// A request body that stops arriving is answered 408 once it has paused for the idle timeout,
/// and the connection closes: over HTTP/1.1 with a declared length (read by the `/mcp` handler)
/// and chunked (read by the body limit before routing), and over HTTP/2. Before, the idle timeout
/// only asked hyper to close after the request, which waited on the client for as long as it
/// kept the socket open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_stops_arriving_is_answered_408_after_the_idle_timeout() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 2;
    })
    .await;
    let declared = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        app.bearer
    );
    let chunked =
        "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n".to_owned();
    for request in [declared, chunked] {
        let mut stream = TcpStream::connect(address(&app)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let (after, answer) = closed_within(&mut stream, Duration::from_secs(8))
            .await
            .unwrap_or_else(|| panic!("still open after 8 s: {request}"));
        assert!(
            after >= Duration::from_millis(1_900) && after < Duration::from_secs(5),
            "closed after {after:?}: {request} -> {answer}"
        );
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"REQUEST_TIMEOUT\""), "{answer}");
    }

    let started = Instant::now();
    let (status, text) = tokio::time::timeout(
        Duration::from_secs(8),
        svc_tests::h2::post_stalled(&format!("{}/mcp", app.base), "application/json", b"{\"jsonrpc\""),
    )
    .await
    .expect("the stalled HTTP/2 stream is answered")
    .unwrap();
    assert_eq!(status, 408, "{text}");
    assert!(
        started.elapsed() >= Duration::from_millis(1_900),
        "{:?}",
        started.elapsed()
    );
}

/// A chunked request to `path` whose first chunk is `bytes` long; the body never ends.
fn chunked_head_and(path: &str, bytes: usize) -> Vec<u8> {
    let mut request =
        format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n{bytes:x}\r\n")
            .into_bytes();
    request.resize(request.len() + bytes, b'a');
    request.extend_from_slice(b"\r\n");
    request
}

/// A body that never pauses for the idle timeout but keeps coming is cut off once it has taken
/// the body read timeout in all; bodies arriving at once share one memory budget, refused 503
/// past it and given back when each ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickling_body_is_cut_off_and_bodies_in_flight_share_one_budget() {
    let app = server(|c| {
        c.header_read_timeout_seconds = 30;
        c.idle_timeout_seconds = 4;
        c.body_read_timeout_seconds = 3;
        c.body_bytes_in_flight_mib = 1;
    })
    .await;

    // One byte every half second: never a pause near the idle timeout.
    let stream = TcpStream::connect(address(&app)).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let started = Instant::now();
    writer.write_all(&chunked_head_and("/healthz", 1)).await.unwrap();
    let trickle = tokio::spawn(async move {
        while started.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if writer.write_all(b"1\r\na\r\n").await.is_err() {
                break;
            }
        }
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut answer)).await;
    let after = started.elapsed();
    trickle.abort();
    let answer = String::from_utf8_lossy(&answer);
    assert!(read.is_ok(), "still open after 10 s of trickling");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"REQUEST_TIMEOUT\""), "{answer}");
    assert!(
        after >= Duration::from_millis(2_900) && after < Duration::from_secs(4),
        "answered after {after:?}: by the whole-body deadline, before any pause could count"
    );

    // 700 KiB held of a 1 MiB budget: a second body of 700 KiB is refused while it is held.
    let mut holder = TcpStream::connect(address(&app)).await.unwrap();
    holder
        .write_all(&chunked_head_and("/healthz", 700 * 1024))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut second = TcpStream::connect(address(&app)).await.unwrap();
    // The server refuses partway through; the rest it drains for a while, then closes.
    let _ = second.write_all(&chunked_head_and("/healthz", 700 * 1024)).await;
    let (_, refused) = closed_within(&mut second, Duration::from_secs(8))
        .await
        .expect("the refused body's connection closes");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("\"SERVER_BUSY\""), "{refused}");
    assert!(refused.to_ascii_lowercase().contains("retry-after: 1\r\n"), "{refused}");
    drop(holder);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut third = TcpStream::connect(address(&app)).await.unwrap();
    let mut whole = chunked_head_and("/healthz", 700 * 1024);
    whole.extend_from_slice(b"0\r\n\r\n");
    third.write_all(&whole).await.unwrap();
    let answer = answer_head(&mut third).await;
    assert!(
        !answer.starts_with("HTTP/1.1 503") && !answer.starts_with("HTTP/1.1 408"),
        "the budget was given back when the holder left: {answer}"
    );
}

/// An HTTP/2 client sends `:authority` and no `Host`: the loopback host passes the DNS-rebinding
/// guard, another name does not, and requests share the connection while a long-poll waits on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_clients_are_served_and_the_guard_reads_their_authority() {
    let app = server(|_| {}).await;
    let connection = svc_tests::h2::connect(&app.base).await;
    let call = |tool: &str, arguments: serde_json::Value| serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let rendered = app
        .render(
            "h2 card",
            serde_json::json!({ "propsSpec": { "type": "object" } }),
            serde_json::json!({}),
        )
        .await;
    let session = rendered["sessionId"].as_str().unwrap().to_owned();
    let url = format!("{}/mcp", app.base);

    // A long-poll held on the connection does not stop the next request on it.
    let poll = {
        let (connection, url, bearer) = (connection.clone(), url.clone(), app.bearer.clone());
        let body = call("svc_consume", serde_json::json!({ "sessionId": session, "timeout": 3 }));
        tokio::spawn(async move { svc_tests::h2::post_json(connection, &url, &bearer, &body).await })
    };
    let started = Instant::now();
    let (status, text) = svc_tests::h2::post_json(
        connection.clone(),
        &url,
        &app.bearer,
        &call("svc_get_session", serde_json::json!({ "sessionId": session })),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{text}");
    let reply: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["result"]["structuredContent"]["id"], session.as_str(), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered beside the held poll"
    );
    let (status, text) = poll.await.unwrap().unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"events\":[]"), "the poll ended by its timeout: {text}");

    // A rebinding page's name as `:authority` is refused like a `Host` would be.
    let port = app.base.rsplit(':').next().unwrap();
    let (status, text) = svc_tests::h2::post_json(
        connection,
        &format!("http://rebound.example:{port}/mcp"),
        &app.bearer,
        &call("svc_get_session", serde_json::json!({ "sessionId": session })),
    )
    .await
    .unwrap();
    assert_eq!(
        (status.as_u16(), text.as_str()),
        (403, "Host header is not an allowed host")
    );
}
