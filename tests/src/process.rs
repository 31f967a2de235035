//! The real `svc` binary as a child process, for tests that need a process boundary (SIGKILL,
//! restarts, third-party peers).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `svc serve`; killed with SIGKILL when dropped.
pub struct ServerProcess {
    child: Child,
    pub base: String,
    /// The banner's lines up to its `  auth:` line (the first line alone for another program).
    banner: String,
}

impl ServerProcess {
    /// Starts `binary serve --port 0 --data-dir <dir> <extra...>` and waits for its banner.
    pub fn start(binary: &str, data_dir: &Path, extra: &[&str]) -> Self {
        Self::start_on_port(binary, data_dir, 0, extra)
    }

    /// Like [`ServerProcess::start`] on a chosen port (a `--public-base-url` deployment's
    /// replicas listen on ports the proxy in front of them must know).
    pub fn start_on_port(binary: &str, data_dir: &Path, port: u16, extra: &[&str]) -> Self {
        Self::spawn(Command::new(binary).stderr(Stdio::null()), data_dir, port, extra)
    }

    /// Like [`ServerProcess::start`] in the working directory `cwd` (where `svc serve` finds the
    /// project's `svc.json` without `--manifest`).
    pub fn start_in(binary: &str, cwd: &Path, data_dir: &Path, extra: &[&str]) -> Self {
        Self::spawn(
            Command::new(binary).current_dir(cwd).stderr(Stdio::null()),
            data_dir,
            0,
            extra,
        )
    }

    /// Like [`ServerProcess::start`] with `RUST_LOG=<filter>`, the log (stderr) written to `log`
    /// as a deployment writes it (without the caller's `NO_COLOR`, which would hide colours the
    /// server should not write to a file anyway).
    pub fn start_logging(binary: &str, data_dir: &Path, extra: &[&str], filter: &str, log: &Path) -> Self {
        let file = std::fs::File::create(log).expect("log file");
        Self::spawn(
            Command::new(binary)
                .env("RUST_LOG", filter)
                .env_remove("NO_COLOR")
                .stderr(Stdio::from(file)),
            data_dir,
            0,
            extra,
        )
    }

    fn spawn(command: &mut Command, data_dir: &Path, port: u16, extra: &[&str]) -> Self {
        let mut child = command
            .args(["serve", "--port", &port.to_string(), "--data-dir"])
            .arg(data_dir)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn svc");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first).expect("banner");
        let mut banner = first.clone();
        // `svc serve` writes its banner at once; its `  auth:` line always comes.
        if first.starts_with("svc ") && first.contains(" listening on ") {
            let mut line = String::new();
            while !line.starts_with("  auth:") {
                line.clear();
                if reader.read_line(&mut line).expect("banner") == 0 {
                    break;
                }
                banner.push_str(&line);
            }
        }
        // Keep draining stdout so the server never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let base = first
            .split("listening on ")
            .nth(1)
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|| panic!("unexpected banner: {first:?}"));
        Self { child, base, banner }
    }

    /// What the server printed at start-up, up to its `  auth:` line.
    pub fn banner(&self) -> &str {
        &self.banner
    }

    /// The child's process id (for /proc readings).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then waits for the exit.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        assert!(sent.success());
        self.child.wait().expect("reap")
    }

    /// Sends SIGTERM without waiting.
    pub fn send_term(&self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        assert!(sent.success());
    }

    /// Waits up to `limit` for the process to exit; `None` (and SIGKILL on drop) when it did not.
    pub fn exit_within(mut self, limit: std::time::Duration) -> Option<std::process::ExitStatus> {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }

    /// SIGKILL: no graceful shutdown, no chance to flush anything.
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("reap");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
