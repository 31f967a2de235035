//! Embedding (Document 2, server modes): a program builds the server with
//! `svc::embed::EmbeddedServer`. With no key check it runs in the open mode and refuses to bind
//! beyond loopback; given one, it is strict and may listen anywhere. Driven through the small
//! example binary `embedded-example`, as a user's program would run it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Backend, ScratchDatabase, on_both_backends, temp_dir};

const EXAMPLE: &str = env!("CARGO_BIN_EXE_embedded-example");

on_both_backends!(
    without_a_key_check_it_serves_loopback_in_the_open_mode,
    without_a_key_check_it_refuses_to_bind_beyond_loopback,
    with_a_key_check_it_binds_anywhere_and_checks_bearers,
);

/// The example, running; killed when dropped.
struct Embedded {
    child: Child,
    base: String,
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(host: &str, database: &ScratchDatabase, data_dir: &std::path::Path, key: Option<&str>) -> Command {
    let mut command = Command::new(EXAMPLE);
    command
        .args(["--host", host, "--database-url", &database.url, "--data-dir"])
        .arg(data_dir);
    if let Some(key) = key {
        command.args(["--key", key]);
    }
    command
}

fn start(mut command: Command) -> Embedded {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the example");
    let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    reader.read_line(&mut first).expect("banner");
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let base = first
        .strip_prefix("embedded svc listening on ")
        .unwrap_or_else(|| panic!("unexpected banner: {first:?}"))
        .trim()
        .to_owned();
    Embedded { child, base }
}

/// `initialize` on `/mcp` with `bearer`: the status.
async fn initialize(base: &str, bearer: &str) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": { "protocolVersion": "2025-06-18", "clientInfo": { "name": "t", "version": "1" }, "capabilities": {} } }))
        .send()
        .await
        .expect("request");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn without_a_key_check_it_serves_loopback_in_the_open_mode(backend: Backend) {
    let data_dir = temp_dir("svc-embedded");
    let Some(database) = ScratchDatabase::create("embedded_open", backend, &data_dir).await else {
        return;
    };
    let server = start(command("127.0.0.1", &database, &data_dir, None));
    for bearer in ["anything", "something-else"] {
        let (status, body) = initialize(&server.base, bearer).await;
        assert_eq!(status, StatusCode::OK, "the open mode accepts any bearer: {body}");
    }
    let rendered = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .bearer_auth("anything")
        .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "svc_list_themes", "arguments": {} } }))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert!(
        rendered["result"]["structuredContent"]["themes"].is_array(),
        "{rendered}"
    );
}

async fn without_a_key_check_it_refuses_to_bind_beyond_loopback(backend: Backend) {
    let data_dir = temp_dir("svc-embedded");
    let Some(database) = ScratchDatabase::create("embedded_refused", backend, &data_dir).await else {
        return;
    };
    let mut child = command("0.0.0.0", &database, &data_dir, None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the open mode started beyond loopback"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "it never listened");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("open mode"), "{stderr}");
    assert!(lines[0].contains("key check"), "{stderr}");
    assert!(lines[0].contains("0.0.0.0"), "{stderr}");
}

async fn with_a_key_check_it_binds_anywhere_and_checks_bearers(backend: Backend) {
    let data_dir = temp_dir("svc-embedded");
    let Some(database) = ScratchDatabase::create("embedded_keyed", backend, &data_dir).await else {
        return;
    };
    let server = start(command("0.0.0.0", &database, &data_dir, Some("the-embedders-secret")));
    let (status, body) = initialize(&server.base, "the-embedders-secret").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = initialize(&server.base, "a-guess").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], -32007);
}
