//! `svc registry serve` as a real process: where it listens, how it logs, and its connection
//! limits (`[connections]`).

use crate::registry_support::RegistryProcess;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::raw_http::{closed_within, dribble_until_closed};

/// `svc registry serve` as a real process: it prints where it listens and answers there.
#[tokio::test]
async fn svc_registry_serve_listens_where_it_says() {
    let registry = RegistryProcess::start(None);
    let health: Value = reqwest::get(format!("{}/health", registry.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({ "status": "ok" }));
}

/// `svc registry serve` logs as `svc serve` does: in the format `server.log_format` of its
/// configuration names, and `--log-format` overrides it (before, it always logged plain text).
#[tokio::test]
async fn svc_registry_serve_logs_in_the_configured_format() {
    let is_json = |line: &str| serde_json::from_str::<Value>(line).is_ok_and(|v| v.is_object());
    let json_lines = registry_log("[server]\nlog_format = \"json\"\n", &[]).await;
    assert!(
        !json_lines.is_empty(),
        "the registry logged nothing under RUST_LOG=debug"
    );
    assert!(json_lines.iter().all(|l| is_json(l)), "{json_lines:#?}");
    let text_lines = registry_log("[server]\nlog_format = \"json\"\n", &["--log-format", "text"]).await;
    assert!(
        !text_lines.is_empty(),
        "the registry logged nothing under RUST_LOG=debug"
    );
    assert!(!text_lines.iter().any(|l| is_json(l)), "{text_lines:#?}");
}

/// The non-empty lines `svc registry serve` wrote to stderr under `RUST_LOG=debug`, from its
/// start to its first answer to `/health`.
async fn registry_log(config: &str, flags: &[&str]) -> Vec<String> {
    let registry = RegistryProcess::start_logging(config, flags);
    let health = reqwest::get(format!("{}/health", registry.base)).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    registry.stopped_log()
}

/// The registry is served under `[connections]` as `svc serve` is: a head that keeps dribbling in
/// is cut off at the header-read timeout, and a body that stops arriving is answered 408 once it
/// has paused for the idle timeout, and its connection closed (before, both were held for as long
/// as the client kept the socket open).
#[tokio::test]
async fn svc_registry_serve_cuts_off_slow_heads_and_stalled_bodies() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let registry = RegistryProcess::start(Some(
        "[connections]\nheader_read_timeout_seconds = 1\nidle_timeout_seconds = 2\n",
    ));
    let mut slow_head = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let started = std::time::Instant::now();
    slow_head
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    let every = std::time::Duration::from_millis(200);
    let after = dribble_until_closed(&mut slow_head, every, started, std::time::Duration::from_secs(6))
        .await
        .expect("a head still arriving after the header-read timeout is cut off");
    assert!(
        after >= std::time::Duration::from_millis(900) && after < std::time::Duration::from_secs(3),
        "closed after {after:?}"
    );

    let token = registry.mint("acme");
    let mut stalled_body = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let head = format!(
        "POST /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"manifest\""
    );
    stalled_body.write_all(head.as_bytes()).await.unwrap();
    let (after, answer) = closed_within(&mut stalled_body, std::time::Duration::from_secs(8))
        .await
        .expect("a body that stopped arriving does not hold its connection");
    assert!(
        after >= std::time::Duration::from_millis(1_900) && after < std::time::Duration::from_secs(5),
        "closed after {after:?}"
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"request_timeout\""), "{answer}");

    // Without a valid credential the body is never read: 401 at once, not 408 after waiting on
    // it (nor 8 MiB read and parsed for a stranger).
    let mut stranger = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let head = "POST /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"manifest\"";
    let started = std::time::Instant::now();
    stranger.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n") {
        let mut buf = [0u8; 1024];
        let read = tokio::time::timeout(std::time::Duration::from_secs(8), stranger.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(read > 0, "closed unanswered");
        answer.extend_from_slice(&buf[..read]);
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1_500),
        "answered after {:?}, before the body could time out",
        started.elapsed()
    );
}

/// Past `[connections] max_connections` the registry still answers `GET /health` on its headroom,
/// and anything else its own 503 `overloaded` (docs/registry.md).
#[tokio::test]
async fn past_its_connection_cap_the_registry_answers_health_and_overloaded() {
    use tokio::io::AsyncWriteExt;

    let registry = RegistryProcess::start(Some(
        "[connections]\nmax_connections = 1\nhealth_headroom = 4\nidle_timeout_seconds = 30\n",
    ));
    // The one slot, held open by a connection that has been answered once.
    let mut held = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    held.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 12];
    tokio::io::AsyncReadExt::read_exact(&mut held, &mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");

    let fresh = || reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let health = fresh().get(format!("{}/health", registry.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let refused = fresh().get(format!("{}/whoami", registry.base)).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "overloaded", "{body}");
    drop(held);
}
