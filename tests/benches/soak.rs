//! A bounded soak: mixed tool calls, live-channel sockets and long-polls against the real `svc`
//! binary (a child process on loopback, `--dev-allow-all`, SQLite) for `SOAK_MINUTES` (default
//! 30), reporting the server's RSS and open descriptors at the start, every few minutes, at the
//! end of the load and after it has drained, then the failures per tool. A leak shows as growth
//! that does not come back.
//!
//! The load is paced, not flat out: the soak looks for leaks over time, not for throughput, and
//! it shares its machine. Every worker runs on a fixed period and backs off on failure, so a
//! failing server is never hammered in a tight loop. Cards behave like the runtime: they refresh
//! their wsToken (`svc_runtime_refresh_ws_token`) well before it expires and answer heartbeats.
//!
//! Run: `SOAK_MINUTES=30 cargo bench -p svc-tests --bench soak` (release profile; not in CI).
//! `SOAK_SVC_BINARY` runs another server binary (a `target/release/svc` built once) instead of
//! the bench's own; `SOAK_SERVER_LOG` keeps the server's warnings elsewhere than the temp dir.
//! Figures go to BENCHMARKS.md. It stops by itself and sends traffic to loopback only.

/// The paced workers and the cards they use.
#[path = "soak/load.rs"]
mod soak_load;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use soak_load::{Card, Tally};
use svc_tests::process::ServerProcess;

const SVC_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const SAMPLE_EVERY: Duration = Duration::from_secs(300);

fn main() {
    let minutes: f64 = std::env::var("SOAK_MINUTES")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(30.0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(soak(Duration::from_secs_f64(minutes * 60.0)));
}

async fn soak(length: Duration) {
    let data_dir = svc_tests::temp_dir("svc-soak");
    // The server's warnings and errors, kept beside the figures (`SOAK_SERVER_LOG` moves them).
    let log = std::env::var("SOAK_SERVER_LOG").map_or_else(|_| std::env::temp_dir().join("svc-soak.log"), Into::into);
    let binary = std::env::var("SOAK_SVC_BINARY").unwrap_or_else(|_| SVC_BINARY.to_owned());
    let server = ServerProcess::start_logging(&binary, &data_dir, &["--dev-allow-all"], "warn", &log);
    let pid = server.pid();
    let client = reqwest::Client::new();
    let base = server.base.clone();
    let tally = Arc::new(Tally::default());
    let card = Card::render(&client, &base, &tally)
        .await
        .expect("the soak card renders");
    let stop = Arc::new(AtomicBool::new(false));

    let mut workers = soak_load::hold_idle_sockets(&client, &base, &card, &tally, &stop);
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "soak of {:.1} min against {binary} at {base} (pid {pid})",
        length.as_secs_f64() / 60.0
    );
    println!(
        "{:>8}  {:>9}  {:>5}  {:>9}  {:>8}  {:>8}  {:>8}  {:>8}",
        "minute", "RSS KiB", "fds", "calls", "failed", "sockets", "polls", "resubs"
    );
    sample(pid, 0, &tally);

    workers.extend(soak_load::start_workers(&client, &base, &card, &tally, &stop));
    let started = Instant::now();
    while started.elapsed() < length {
        let left = length.saturating_sub(started.elapsed());
        tokio::time::sleep(left.min(SAMPLE_EVERY)).await;
        sample(pid, started.elapsed().as_secs() / 60, &tally);
    }
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        let _ = worker.await;
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    println!("after the load stopped and the sockets closed (10 s):");
    sample(pid, started.elapsed().as_secs() / 60, &tally);
    drop(server);
    std::fs::remove_dir_all(&data_dir).ok();
    println!("failures per tool or step: {}", tally.failures_by_step());
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let errors = logged.lines().filter(|l| l.contains("ERROR")).count();
    let warnings = logged.lines().filter(|l| l.contains("WARN")).count();
    println!("server log {}: {errors} errors, {warnings} warnings", log.display());
}

/// One line of figures: the server's resident memory and descriptors, and what the load did.
fn sample(pid: u32, minute: u64, tally: &Tally) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .map(|v| v.trim().trim_end_matches("kB").trim().to_owned())
        .unwrap_or_default();
    let fds = std::fs::read_dir(Path::new(&format!("/proc/{pid}/fd")))
        .map(|d| d.count())
        .unwrap_or(0);
    let c = tally.snapshot();
    println!(
        "{minute:>8}  {rss:>9}  {fds:>5}  {:>9}  {:>8}  {:>8}  {:>8}  {:>8}",
        c.calls, c.failures, c.sockets, c.polls, c.resubscribes
    );
}
