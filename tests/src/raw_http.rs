//! Raw TCP clients for what an HTTP client library will not do: watch when the server closes a
//! connection, and send a request head a byte at a time.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection: how long that took and what it sent, or `None`
/// when it stays open past `limit`.
pub async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<(Duration, String)> {
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.checked_sub(started.elapsed())?;
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some((started.elapsed(), String::from_utf8_lossy(&seen).into_owned())),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// Sends one header byte every `every`, a head that never ends, until the server closes the
/// connection: how long after `started` it did, or `None` if it was still open at `give_up`.
pub async fn dribble_until_closed(
    stream: &mut TcpStream,
    every: Duration,
    started: Instant,
    give_up: Duration,
) -> Option<Duration> {
    while started.elapsed() < give_up {
        if stream.write_all(b"a").await.is_err() || closed_within(stream, every).await.is_some() {
            return Some(started.elapsed());
        }
    }
    None
}

/// Sends one request on a kept-alive connection and reads its answer (a small JSON body).
pub async fn exchange(stream: &mut TcpStream, request: &str) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).ends_with('}') {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed before answering: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}
