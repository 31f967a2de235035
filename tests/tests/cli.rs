//! The `svc` command line as a user meets it: start-up failures are one line and a non-zero exit,
//! never a panic; `keys mint` prints the key last and stores only its hash.

use std::process::{Command, Output};
use std::time::Duration;

use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

fn run(args: &[&str]) -> Output {
    let mut child = Command::new(BINARY)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A failure must be quick; a server that starts instead is killed after the deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn one_line_failure(output: &Output) -> String {
    assert!(!output.status.success(), "expected a failure");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, got: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(lines[0].starts_with("svc: "), "{stderr}");
    lines[0].to_owned()
}

#[test]
fn a_bad_flag_is_one_line() {
    let line = one_line_failure(&run(&["serve", "--no-such-flag"]));
    assert!(line.contains("--no-such-flag"), "{line}");
}

#[test]
fn an_unreachable_database_is_one_line_naming_it() {
    let dir = temp_dir("svc-cli");
    let line = one_line_failure(&run(&[
        "serve",
        "--port",
        "0",
        "--data-dir",
        dir.to_str().unwrap(),
        "--database-url",
        "postgres://svc:secret@127.0.0.1:1/nope",
    ]));
    assert!(line.contains("127.0.0.1:1"), "{line}");
    assert!(!line.contains("secret"), "the password is redacted: {line}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn an_unwritable_data_dir_is_one_line_naming_it() {
    let line = one_line_failure(&run(&[
        "serve",
        "--port",
        "0",
        "--data-dir",
        "/proc/svc-cannot-write-here",
    ]));
    assert!(line.contains("/proc/svc-cannot-write-here"), "{line}");
}

#[test]
fn a_missing_config_file_is_one_line_naming_it() {
    let line = one_line_failure(&run(&["serve", "--config", "/nonexistent/svc.toml"]));
    assert!(line.contains("/nonexistent/svc.toml"), "{line}");
}

#[test]
fn keys_mint_prints_the_key_last_and_stores_only_its_hash() {
    let dir = temp_dir("svc-cli-keys");
    let output = run(&["keys", "mint", "--data-dir", dir.to_str().unwrap(), "--name", "laptop"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let key = stdout.lines().last().unwrap();
    assert!(key.starts_with("svc_user_") && key.len() > 30, "{stdout}");
    let stored = std::fs::read_to_string(dir.join("keys.json")).unwrap();
    assert!(!stored.contains(key), "no plaintext in the keys file");
    assert!(stored.contains("laptop"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn public_demo_is_a_serve_flag_backed_by_the_config_section() {
    let help = run(&["serve", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--public-demo"));
    let dir = temp_dir("svc-cli-demo");
    let config = dir.join("demo.toml");
    std::fs::write(&config, "[public_demo]\nwindow_seconds = 0\n").unwrap();
    let line = one_line_failure(&run(&[
        "serve",
        "--public-demo",
        "--port",
        "0",
        "--data-dir",
        dir.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]));
    assert!(line.contains("public_demo.window_seconds"), "{line}");

    // A demo server says so in its banner, with its limit.
    let mut server = Command::new(BINARY)
        .args(["serve", "--public-demo", "--dev-allow-all", "--port", "0", "--data-dir"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..8 {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut banner, &mut line).unwrap() == 0 {
            break;
        }
        let demo = line.contains("public demo:");
        lines.push(line);
        if demo {
            break;
        }
    }
    server.kill().ok();
    server.wait().ok();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("public demo:   30 generations per 600 s per address")),
        "{lines:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}
