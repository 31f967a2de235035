//! One `svc serve` per SQLite file: a second server on the same file refuses to start (it would
//! write rows the first one keeps in memory), and a killed server leaves no claim behind.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_sqlite_file_is_refused_and_the_first_serves_on() {
    let dir = temp_dir("svc-sole-server");
    let first = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);

    let mut second = Command::new(BINARY)
        .args(["serve", "--port", "0", "--dev-allow-all", "--data-dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the second server");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = second.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the second server neither started nor gave up"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    second.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(!status.success(), "the second server must not run: {stderr}");
    assert!(stderr.contains("another `svc serve`"), "{stderr}");
    assert!(
        stderr.contains("svc.db.lock"),
        "the error names the lock file: {stderr}"
    );

    let health = reqwest::get(format!("{}/healthz", first.base)).await.unwrap();
    assert_eq!(health.status(), 200, "the first server serves on");
    drop(first);
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_with_sigkill_leaves_the_file_to_the_next() {
    let dir = temp_dir("svc-sole-server-kill");
    let first = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);
    first.kill();
    // A claim that outlived its server would refuse this start (no banner).
    let next = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);
    let health = reqwest::get(format!("{}/healthz", next.base)).await.unwrap();
    assert_eq!(health.status(), 200);
    drop(next);
    std::fs::remove_dir_all(dir).ok();
}
