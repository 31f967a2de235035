//! External test dependencies (npm peers, Python venvs, Chromium): present, skipped or required,
//! and children run under a deadline.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// True when every path in `needed` exists. Otherwise the test is skipped (a `skipped:` line) or,
/// when the environment variable `require_var` is `1` (as in CI), fails with `install_hint`.
pub fn deps_present(test: &str, needed: &[PathBuf], require_var: &str, what: &str, install_hint: &str) -> bool {
    let missing: Vec<String> = needed
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var(require_var).as_deref() != Ok("1"),
        "{test}: {what} not installed but {require_var}=1: {install_hint}. Missing: {}",
        missing.join(", ")
    );
    println!("skipped: {test} ({what} not installed: {install_hint})");
    false
}

/// How a child ended: its status (`None` when killed at the deadline) and everything it printed.
pub struct Finished {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Runs `command` to completion or `deadline`, whichever comes first (then kills it).
pub fn run_with_deadline(mut command: Command, deadline: Duration) -> Finished {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {shown}: {e}"));
    let collect = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = collect(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = collect(Box::new(child.stderr.take().expect("piped stderr")));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("waiting for {shown}: {e}"),
        }
    };
    Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// `gzip -dc` of `bytes`: a decoder that is not ours.
pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("Debian's gzip");
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "gzip -dc: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
