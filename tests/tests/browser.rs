//! A rendered card in a real browser: `tests/browser/card-flow.mjs` drives Debian's Chromium
//! (playwright-core, never a downloaded browser) against the real `svc` binary. The agent is the
//! official MCP TypeScript SDK client, the host page uses the ext-apps `AppBridge`, and the card
//! is the committed mount runtime inside a `sandbox="allow-scripts"` iframe. It proves: the card
//! mounts from the per-render resource and from the shell plus the tool result; a click reaches
//! `svc_consume` with intent, actionData and uiContext; `svc_update` repaints; `svc_emit` streams;
//! a dropped connection resumes with nothing lost or doubled, and an action clicked offline is
//! delivered once; a history epoch keeps its props; a refused wsToken is refreshed through the
//! host; a CSP without `blob:` still loads the component; a throwing component and an
//! unprovided import show readable errors.
//!
//! Needs `tests/browser/node_modules` and `/usr/bin/chromium` (`bash tests/browser/install.sh`).
//! Without them the test prints `skipped: ...` and passes, unless `SVC_REQUIRE_BROWSER=1`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const CHROMIUM: &str = "/usr/bin/chromium";
const REQUIRE_VAR: &str = "SVC_REQUIRE_BROWSER";
const INSTALL_HINT: &str = "run tests/browser/install.sh";
const DEADLINE: Duration = Duration::from_secs(240);

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

/// True when the browser dependencies are present; otherwise skips, or fails under `SVC_REQUIRE_BROWSER=1`.
fn browser_installed(test: &str) -> bool {
    let chromium = std::env::var("SVC_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_owned());
    let needed = [
        browser_dir().join("node_modules").join("playwright-core"),
        PathBuf::from(&chromium),
    ];
    let missing: Vec<String> = needed
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
        panic!(
            "{test}: browser deps not installed but {REQUIRE_VAR}=1: {INSTALL_HINT} (from the repository root: \
             `bash tests/browser/install.sh`; it runs `apt-get install -y chromium` when {CHROMIUM} is missing and \
             `npm ci` in tests/browser). Missing: {}",
            missing.join(", ")
        );
    }
    println!("skipped: {test} (browser deps not installed: {INSTALL_HINT})");
    false
}

/// Runs the command to completion or the deadline (then kills it); returns the exit success and output.
fn run_with_deadline(mut command: Command, deadline: Duration) -> (Option<bool>, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn node");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait().expect("wait for node") {
            Some(status) => break Some(status.success()),
            None if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let output = format!("{}{}", out.join().unwrap_or_default(), err.join().unwrap_or_default());
    (status, output)
}

#[test]
fn a_card_mounts_acts_updates_streams_and_resumes_in_chromium() {
    let test = "a_card_mounts_acts_updates_streams_and_resumes_in_chromium";
    if !browser_installed(test) {
        return;
    }
    let data_dir = temp_dir("svc-browser");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("card-flow.mjs"))
        .arg(&server.base)
        .current_dir(browser_dir());
    let (status, output) = run_with_deadline(command, DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    match status {
        Some(true) => println!("{output}"),
        Some(false) => panic!("card-flow.mjs failed:\n{output}"),
        None => panic!("card-flow.mjs did not finish within {DEADLINE:?} and was killed:\n{output}"),
    }
}
