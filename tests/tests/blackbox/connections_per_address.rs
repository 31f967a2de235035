//! `connections.max_per_address` (README "Connections"): with a cap of N, N connections from one
//! address are served, the next from it is closed at once without an answer, and once one of
//! the N closes a new one is served again. Loopback is counted like any address.

use std::time::{Duration, Instant};

use svc_tests::raw_http::{closed_within, exchange};
use svc_tests::{Auth, Backend, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CAP: usize = 3;

const HEALTH: &str = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A new connection from 127.0.0.1, when it is answered (and kept alive); `None` when it is
/// closed unanswered.
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
    assert!(seen.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
    Some(stream)
}

/// Whether a new connection from 127.0.0.1 is closed unanswered.
async fn refused(address: &str) -> bool {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let _ = stream.write_all(HEALTH.as_bytes()).await;
    match closed_within(&mut stream, Duration::from_secs(3)).await {
        Some((_, said)) => said.is_empty(),
        None => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_cap_an_address_is_refused_until_one_of_its_connections_closes() {
    let app = TestApp::spawn_configured("connections_per_address", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.connections.max_per_address = CAP;
        s.connections.idle_timeout_seconds = 30;
    })
    .await
    .expect("sqlite always runs");
    let address = app.base.trim_start_matches("http://").to_owned();

    let mut held = Vec::new();
    for n in 0..CAP {
        let stream = served(&address).await;
        held.push(stream.unwrap_or_else(|| panic!("connection {} of {CAP} is served", n + 1)));
    }
    assert!(refused(&address).await, "connection {} is closed unanswered", CAP + 1);

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
    assert!(refused(&address).await, "the cap is full again");
    // The held connections still work.
    for stream in &mut held {
        assert!(exchange(stream, HEALTH).await.starts_with("HTTP/1.1 200"));
    }
}
