//! The NATS broker of the NATS event-bus tests.

/// Where the tests' broker is (`SVC_TEST_NATS_URL`, default `nats://127.0.0.1:4222`).
pub const NATS_URL_VAR: &str = "SVC_TEST_NATS_URL";
/// Set to `1` (CI does) to fail instead of skipping when no broker answers.
pub const REQUIRE_NATS_VAR: &str = "SVC_REQUIRE_NATS";

/// The broker's URL when it accepts connections; otherwise `None` after a loud `skipped:` line,
/// or a panic when `SVC_REQUIRE_NATS=1`.
pub async fn broker_url(test: &str) -> Option<String> {
    let url = std::env::var(NATS_URL_VAR).unwrap_or_else(|_| "nats://127.0.0.1:4222".to_owned());
    let address = url
        .trim_start_matches("nats://")
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_owned();
    let reachable = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        tokio::net::TcpStream::connect(address.as_str()),
    )
    .await
    .is_ok_and(|connected| connected.is_ok());
    if reachable {
        return Some(url);
    }
    let required = std::env::var(REQUIRE_NATS_VAR).is_ok_and(|v| v == "1");
    assert!(!required, "{test}: no NATS broker at {url} and {REQUIRE_NATS_VAR}=1");
    println!("skipped: {test} (no NATS broker at {url}; start nats-server or set {NATS_URL_VAR})");
    eprintln!("SKIPPED: {test}: no NATS broker at {url}");
    None
}
