//! Accounts for hosted tests: `svc users create` and `svc keys mint --user` run as the operator
//! would, against the deployment's database.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use svc_tests::{Auth, Backend, TestApp};

use super::{master_key, postgres_available};

pub const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

/// A hosted server on a fresh PostgreSQL database that checks bearers (no `--dev-allow-all`),
/// master key `k1`, and `configure` on top.
pub async fn hosted_strict_app(test: &str, configure: impl FnOnce(&mut svc::Settings)) -> Option<TestApp> {
    if !postgres_available(test) {
        return None;
    }
    TestApp::spawn_configured(test, Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        configure(s);
    })
    .await
}

/// Runs `svc <args>` with `stdin` piped in (nothing: an empty, closed stdin).
pub fn svc(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BINARY)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("svc runs");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn last_line(out: &Output) -> String {
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    stdout.lines().last().unwrap_or_default().to_owned()
}

/// `svc users create` with `password` on stdin; panics unless it succeeds. The account's user id.
pub fn create_user(database_url: &str, email: &str, password: &str) -> String {
    create_user_with(database_url, email, password, &[])
}

/// [`create_user`] with more flags (`--verified`, `--no-verification-mail`).
pub fn create_user_with(database_url: &str, email: &str, password: &str, flags: &[&str]) -> String {
    let mut args = vec!["users", "create", "--database-url", database_url, "--email", email];
    args.extend_from_slice(flags);
    let out = svc(&args, &format!("{password}\n"));
    assert!(
        out.status.success(),
        "users create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = last_line(&out);
    let user_id = line
        .strip_prefix("created account ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected output: {line}"));
    user_id.to_owned()
}

/// `svc keys mint --database-url --user EMAIL [--name NAME]`; the plaintext (its last line).
pub fn mint_key(database_url: &str, email: &str, name: Option<&str>) -> String {
    let mut args = vec!["keys", "mint", "--database-url", database_url, "--user", email];
    if let Some(name) = name {
        args.extend(["--name", name]);
    }
    let out = svc(&args, "");
    assert!(
        out.status.success(),
        "keys mint: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = last_line(&out);
    assert!(key.starts_with("svc_user_"), "{key}");
    key
}

/// The one line an `svc` failure prints on stderr, and its exit status.
pub fn failure(out: &Output) -> (Option<i32>, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).trim_end().to_owned(),
    )
}
