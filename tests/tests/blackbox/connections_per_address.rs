//! `connections.max_per_address` (README "Connections"): with a cap of N, N connections from one
//! address are served; past them, one more place answers a health probe (`/healthz`, `/readyz`)
//! once and closes, so an orchestrator sharing the clients' address still sees the server, while
//! anything else asked there is closed unanswered, as is a connection past that place too; once
//! one of the N closes a new one is served again. Loopback is counted like any address.

use std::time::{Duration, Instant};

use svc_tests::raw_http::{closed_within, exchange};
use svc_tests::{Auth, Backend, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CAP: usize = 3;

const HEALTH: &str = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
const READY: &str = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
/// Anything but a probe (answered 200 on a connection under the cap: connections.rs).
const WORK: &str = "GET /_svc/iframe-runtime.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

async fn spawn(name: &str, header_read_timeout_seconds: u64) -> (TestApp, String) {
    let app = TestApp::spawn_configured(name, Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.connections.max_per_address = CAP;
        s.connections.idle_timeout_seconds = 30;
        s.connections.header_read_timeout_seconds = header_read_timeout_seconds;
    })
    .await
    .expect("sqlite always runs");
    let address = app.base.trim_start_matches("http://").to_owned();
    (app, address)
}

/// A new connection from 127.0.0.1 served in full: its `/healthz` answered and the connection
/// kept alive. `None` when it is closed unanswered, or answered as a probe alone (and closed).
async fn served(address: &str) -> Option<TcpStream> {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(HEALTH.as_bytes()).await.ok()?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).ends_with('}') {
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
            Err(_) => panic!("neither answered nor closed: {}", String::from_utf8_lossy(&seen)),
            Ok(Ok(0) | Err(_)) => return None,
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let said = String::from_utf8_lossy(&seen).to_lowercase();
    assert!(said.starts_with("http/1.1 200"), "{said}");
    (!said.contains("connection: close")).then_some(stream)
}

/// What a new connection from 127.0.0.1 sending `request` is told before the server closes it
/// ("" when it is closed unanswered).
async fn answer_then_close(address: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let _ = stream.write_all(request.as_bytes()).await;
    let (_, said) = closed_within(&mut stream, Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("{request:?}: the connection is closed"));
    said
}

/// A probe past the cap: answered 200 once, said to close, and closed. (The server closes a
/// connection a moment before its place is free again: a probe right after another may find it
/// still taken, and is closed unanswered; so it is asked again, for a while.)
async fn answered_as_probe(address: &str, request: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let said = loop {
        let said = answer_then_close(address, request).await;
        if !said.is_empty() || Instant::now() > deadline {
            break said;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(said.starts_with("HTTP/1.1 200"), "{request:?}: {said}");
    assert!(said.to_lowercase().contains("connection: close"), "{said}");
}

/// A new connection from 127.0.0.1 that says nothing and is still open a moment later: it holds
/// the probe place (asked again while the place is still the last probe's, as above).
async fn holding_the_probe_place(address: &str) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut silent = TcpStream::connect(address).await.unwrap();
        if closed_within(&mut silent, Duration::from_millis(300)).await.is_none() {
            return silent;
        }
        assert!(Instant::now() < deadline, "a silent connection takes the probe place");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_cap_an_address_is_refused_but_for_a_probe_until_one_of_its_connections_closes() {
    let (_app, address) = spawn("connections_per_address", 30).await;

    let mut held = Vec::new();
    for n in 0..CAP {
        let stream = served(&address).await;
        held.push(stream.unwrap_or_else(|| panic!("connection {} of {CAP} is served", n + 1)));
    }
    // At the cap: the probes still answer, each on a connection of its own that closes after.
    answered_as_probe(&address, HEALTH).await;
    answered_as_probe(&address, READY).await;
    // Anything else there is closed unanswered, as a connection past the cap is: asked on a
    // connection seen holding the place (a new one might meet the last probe's place not yet
    // free, and be closed unanswered for that).
    let mut place = holding_the_probe_place(&address).await;
    let _ = place.write_all(WORK.as_bytes()).await;
    let (_, said) = closed_within(&mut place, Duration::from_secs(5))
        .await
        .expect("the probe place is closed after anything but a probe");
    assert_eq!(said, "", "closed unanswered");

    // The probe place is one: while a connection holds it, the next is closed unanswered.
    let silent = holding_the_probe_place(&address).await;
    assert_eq!(
        answer_then_close(&address, HEALTH).await,
        "",
        "past the probe place, closed unanswered"
    );
    // Once it closes, the place is a probe's again.
    drop(silent);
    answered_as_probe(&address, HEALTH).await;

    // The server sees the close when it next reads the socket: a new connection is served soon.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    let replacement = loop {
        if let Some(stream) = served(&address).await {
            break stream;
        }
        assert!(Instant::now() < deadline, "a closed connection gave its place back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    held.push(replacement);
    assert_eq!(answer_then_close(&address, WORK).await, "", "the cap is full again");
    answered_as_probe(&address, HEALTH).await;
    // The held connections still work.
    for stream in &mut held {
        assert!(exchange(stream, HEALTH).await.starts_with("HTTP/1.1 200"));
    }
}

/// A connection that takes the probe place and says nothing keeps it no longer than the
/// header-read timeout, as any connection's first head is due within it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_in_the_probe_place_is_closed_by_the_header_read_timeout() {
    let (_app, address) = spawn("connections_per_address_silent", 3).await;
    let mut held = Vec::new();
    for _ in 0..CAP {
        held.push(served(&address).await.expect("served under the cap"));
    }
    let mut silent = holding_the_probe_place(&address).await;
    assert_eq!(answer_then_close(&address, HEALTH).await, "", "the probe place is held");
    let (_, said) = closed_within(&mut silent, Duration::from_secs(5))
        .await
        .expect("the silent connection is closed");
    assert_eq!(said, "", "closed unanswered");
}
