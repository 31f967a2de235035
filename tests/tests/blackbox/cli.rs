//! The `svc` command line as a user meets it: start-up failures are one line and a non-zero exit,
//! never a panic (status 2 for a usage error, 1 for anything else); the documented environment
//! variables work and unknown ones are refused; `keys mint|list|revoke` work on the deployment's
//! keys file; `migrate` applies the migrations and exits.

use std::process::{Command, Output};
use std::time::Duration;

use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

fn run(args: &[&str]) -> Output {
    run_with_env(args, &[])
}

fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(BINARY)
        .args(args)
        .envs(env.iter().copied())
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
fn a_bad_flag_is_one_line_and_status_2() {
    let output = run(&["serve", "--no-such-flag"]);
    let line = one_line_failure(&output);
    assert!(line.contains("--no-such-flag"), "{line}");
    assert_eq!(output.status.code(), Some(2), "a usage error");
}

#[test]
fn a_missing_argument_is_named() {
    let output = run(&["coupons", "issue"]);
    let line = one_line_failure(&output);
    assert!(line.contains("--cents"), "{line}");
    assert_eq!(output.status.code(), Some(2));
    let line = one_line_failure(&run(&["keys", "revoke"]));
    assert!(line.contains("<KEY>"), "{line}");
}

/// A script that forgot the command fails (clap's own handling printed the help and exited 0).
#[test]
fn a_missing_command_is_one_line_naming_the_commands_and_status_2() {
    let output = run(&["keys"]);
    let line = one_line_failure(&output);
    assert_eq!(output.status.code(), Some(2), "{line}");
    for command in ["mint", "list", "revoke"] {
        assert!(line.contains(command), "{line}");
    }
    assert!(line.contains("`svc keys --help`"), "{line}");
    let output = run(&[]);
    let line = one_line_failure(&output);
    assert_eq!(output.status.code(), Some(2), "{line}");
    assert!(line.contains("serve") && line.contains("migrate"), "{line}");
}

#[test]
fn every_serve_flag_has_help_text() {
    let help = String::from_utf8(run(&["serve", "--help"]).stdout).unwrap();
    let lines: Vec<&str> = help.lines().collect();
    for flag in ["--host <HOST>", "--port <PORT>"] {
        let at = lines
            .iter()
            .position(|l| l.contains(flag))
            .unwrap_or_else(|| panic!("{help}"));
        // clap puts the text after the flag, or on the next line when the texts are long.
        let same_line = lines[at].trim().trim_start_matches(flag).trim();
        let next_line = lines.get(at + 1).map_or("", |l| l.trim());
        let text = if same_line.is_empty() { next_line } else { same_line };
        assert!(text.len() > 10 && !text.starts_with('-'), "{flag} is explained: {help}");
    }
}

#[test]
fn an_unreachable_database_is_one_line_naming_it() {
    let dir = temp_dir("svc-cli");
    let output = run(&[
        "serve",
        "--port",
        "0",
        "--data-dir",
        dir.to_str().unwrap(),
        "--database-url",
        "postgres://svc:secret@127.0.0.1:1/nope",
    ]);
    let line = one_line_failure(&output);
    assert!(line.contains("127.0.0.1:1"), "{line}");
    assert!(!line.contains("secret"), "the password is redacted: {line}");
    assert_eq!(output.status.code(), Some(1), "a failure, not a usage error");
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

/// Starts `serve` with `args` and `env`; returns the child and its banner's first three lines.
fn serve(args: &[&str], env: &[(&str, &str)]) -> (std::process::Child, Vec<String>) {
    serve_reading(args, env, 3)
}

/// [`serve`], reading the banner's first `count` lines.
fn serve_reading(args: &[&str], env: &[(&str, &str)], count: usize) -> (std::process::Child, Vec<String>) {
    let mut child = Command::new(BINARY)
        .arg("serve")
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..count {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut banner, &mut line).unwrap() == 0 {
            break;
        }
        lines.push(line.trim_end().to_owned());
    }
    std::thread::spawn(move || std::io::copy(&mut banner, &mut std::io::sink()));
    (child, lines)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A deployment without mail or NATS may blank their settings: empty is unset, not a bad form.
#[test]
fn blank_settings_of_features_that_are_off_still_start() {
    let dir = temp_dir("svc-cli-blank-dormant");
    let (mut child, banner) = serve(
        &["--port", "0", "--data-dir", dir.to_str().unwrap()],
        &[
            ("SVC_MAIL__FROM", ""),
            ("SVC_NATS__URL", ""),
            ("SVC_OAUTH__CONSENT_URL", ""),
        ],
    );
    child.kill().ok();
    child.wait().ok();
    assert!(
        banner
            .first()
            .is_some_and(|line| line.contains(" listening on http://127.0.0.1:")),
        "{banner:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// An open server has no pair code: its banner's OAuth line says what consents instead.
#[test]
fn an_open_server_with_oauth_offers_no_pair_code_to_consent_with() {
    let dir = temp_dir("svc-cli-open-oauth-banner");
    let (mut child, banner) = serve_reading(
        &[
            "--dev-allow-all",
            "--oauth",
            "--port",
            "0",
            "--data-dir",
            dir.to_str().unwrap(),
        ],
        &[],
        5,
    );
    child.kill().ok();
    child.wait().ok();
    let oauth = banner
        .iter()
        .find(|line| line.starts_with("  OAuth issuer:"))
        .unwrap_or_else(|| panic!("an OAuth line: {banner:?}"));
    assert!(oauth.contains("(consent with any key at http://127.0.0.1:"), "{oauth}");
    assert!(!banner.iter().any(|line| line.contains("pair code")), "{banner:?}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_documented_environment_variable_sets_the_port() {
    let dir = temp_dir("svc-cli-env");
    let port = free_port().to_string();
    let data_dir = dir.to_str().unwrap();
    let (mut child, banner) = serve(
        &["--dev-allow-all"],
        &[("SVC_SERVER__PORT", &port), ("SVC_SERVER__DATA_DIR", data_dir)],
    );
    child.kill().ok();
    child.wait().ok();
    assert_eq!(
        banner.first().map(String::as_str),
        Some(format!("svc {} listening on http://127.0.0.1:{port}", env!("CARGO_PKG_VERSION")).as_str()),
        "{banner:?}"
    );
    assert!(dir.join("svc.db").exists(), "SVC_SERVER__DATA_DIR took effect");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn unknown_settings_stop_start_up_naming_the_nearest_known_one() {
    let dir = temp_dir("svc-cli-unknown");
    let data_dir = dir.to_str().unwrap();
    let line = one_line_failure(&run_with_env(
        &["serve", "--port", "0", "--data-dir", data_dir],
        &[("SVC_SERVER__PROT", "7000")],
    ));
    assert_eq!(
        line,
        "svc: configuration: unknown environment variable SVC_SERVER__PROT; the nearest known one is SVC_SERVER__PORT"
    );
    let config = dir.join("svc.toml");
    std::fs::write(
        &config,
        "[generation]
concurency = 4
",
    )
    .unwrap();
    let line = one_line_failure(&run(&[
        "serve",
        "--port",
        "0",
        "--data-dir",
        data_dir,
        "--config",
        config.to_str().unwrap(),
    ]));
    assert!(
        line.contains("unknown key `generation.concurency`") && line.ends_with("generation.concurrency"),
        "{line}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn an_ipv6_loopback_host_binds_and_answers() {
    let dir = temp_dir("svc-cli-ipv6");
    let (mut child, banner) = serve(
        &[
            "--dev-allow-all",
            "--host",
            "::1",
            "--port",
            "0",
            "--data-dir",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    let listening = banner.first().cloned().unwrap_or_default();
    let port = listening
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("no port in the banner: {banner:?}"));
    let health = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("::1", port)).expect("connect to [::1]");
        write!(
            stream,
            "GET /healthz HTTP/1.1\r\nHost: [::1]:{port}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok();
        answer
    };
    child.kill().ok();
    child.wait().ok();
    assert!(listening.contains(&format!("http://[::1]:{port}")), "{banner:?}");
    assert!(
        banner
            .iter()
            .any(|l| l.contains(&format!("MCP endpoint:  http://[::1]:{port}/mcp"))),
        "the public URL brackets the address once: {banner:?}"
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn dev_allow_all_off_loopback_needs_an_acknowledgement_and_the_banner_tells_the_truth() {
    let dir = temp_dir("svc-cli-exposed");
    let data_dir = dir.to_str().unwrap();
    let output = run(&[
        "serve",
        "--dev-allow-all",
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--data-dir",
        data_dir,
    ]);
    let line = one_line_failure(&output);
    assert!(
        line.contains("0.0.0.0") && line.contains("--dev-allow-all-remote"),
        "{line}"
    );
    assert_eq!(output.status.code(), Some(1));

    let (mut child, banner) = serve(
        &[
            "--dev-allow-all",
            "--dev-allow-all-remote",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--data-dir",
            data_dir,
        ],
        &[],
    );
    child.kill().ok();
    child.wait().ok();
    assert!(
        banner[0].contains(" listening on http://0.0.0.0:"),
        "the real address: {banner:?}"
    );
    assert!(
        banner[1].starts_with("  public URL:    http://127.0.0.1:"),
        "{banner:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_weak_ws_secret_stops_start_up() {
    let dir = temp_dir("svc-cli-secret");
    let data_dir = dir.to_str().unwrap();
    let rows = [
        ("too-short", "server.ws_secret is 9 bytes"),
        (
            "change-me-to-64-random-hex-characters",
            "server.ws_secret is a placeholder",
        ),
    ];
    for (secret, expected) in rows {
        let output = run_with_env(
            &["serve", "--port", "0", "--data-dir", data_dir],
            &[("SVC_SERVER__WS_SECRET", secret)],
        );
        let line = one_line_failure(&output);
        assert!(line.contains(expected), "{line}");
        assert!(!line.contains(secret), "the secret is not echoed: {line}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// A setting that cannot work stops start-up when it is written, also while the feature it
/// belongs to is off (turning the feature on later must not be the moment it fails), and a
/// default session lifetime of nothing is refused, not met by a render; each as the one line.
#[test]
fn settings_that_cannot_work_stop_start_up_even_with_their_feature_off() {
    let dir = temp_dir("svc-cli-dormant-settings");
    let data_dir = dir.to_str().unwrap();
    let rows: [(&[(&str, &str)], &str); 21] = [
        (
            &[("SVC_TOOL_CALLS__PER", "identiy")],
            "tool_calls.per must be identity or app, not `identiy`",
        ),
        (
            &[("SVC_TOOL_CALLS__WINDOW_SECONDS", "0")],
            "tool_calls.window_seconds must be at least 1, not 0",
        ),
        (
            &[("SVC_PUBLIC_DEMO__WINDOW_SECONDS", "0")],
            "public_demo.window_seconds must be at least 1, not 0",
        ),
        (
            &[
                ("SVC_MCP_APPS__ENABLED", "false"),
                ("SVC_MCP_APPS__RUNTIME_URL", "https://cdn.example.com/rt.js"),
            ],
            "mcp_apps.runtime_url needs mcp_apps.runtime_integrity",
        ),
        // Past a day, every connection's deadline overflowed the clock and its task panicked.
        (
            &[("SVC_CONNECTIONS__IDLE_TIMEOUT_SECONDS", "18446744073709551615")],
            "connections.idle_timeout_seconds must be at most 86400, not 18446744073709551615",
        ),
        (
            &[("SVC_GENERATION__CONCURRENCY", "0")],
            "generation.concurrency must be at least 1, not 0",
        ),
        (
            &[("SVC_SESSIONS__DEFAULT_TTL_SECONDS", "0")],
            "sessions.default_ttl_seconds must be at least 1, not 0",
        ),
        // Hosted mode, OAuth, mail, the NATS bus and the LLM generators are off by default.
        (
            &[("SVC_HOSTED__SIGNUP", "bogus")],
            "hosted.signup must be closed, invite or open, not `bogus`",
        ),
        (
            &[("SVC_HOSTED__MASTER_KEYS", "bad")],
            "hosted.master_keys[0] must be written id:base64-of-32-bytes",
        ),
        (
            &[("SVC_HOSTED__FREE_CREDIT_CENTS", "-1")],
            "hosted.free_credit_cents must be 0 or more",
        ),
        (
            &[("SVC_HOSTED__GENERATIONS_PER_PRINCIPAL", "0")],
            "hosted.generations_per_principal must be at least 1, not 0",
        ),
        (
            &[("SVC_HOSTED__INVITE_MAILS_PER_HOUR", "0")],
            "hosted.invite_mails_per_hour must be at least 1, not 0",
        ),
        (
            &[("SVC_HOSTED__ORGS_PER_ACCOUNT", "0")],
            "hosted.orgs_per_account must be at least 1, not 0",
        ),
        (
            &[("SVC_HOSTED__CONNECTOR_KEYS_PER_ACCOUNT", "0")],
            "hosted.connector_keys_per_account must be at least 1, not 0",
        ),
        (
            &[("SVC_HOSTED__CONSOLE_SESSIONS_PER_ACCOUNT", "0")],
            "hosted.console_sessions_per_account must be at least 1, not 0",
        ),
        (
            &[("SVC_HOSTED__OIDC__ISSUER", "https://id.example.com")],
            "hosted.oidc.issuer is set but hosted.oidc.client_id is empty",
        ),
        (
            &[("SVC_OAUTH__CONSENT_URL", "notaurl")],
            "oauth.consent_url \"notaurl\": relative URL without a base",
        ),
        (&[("SVC_MAIL__FROM", "not-an-address")], "mail.from is not a mailbox"),
        (
            &[("SVC_NATS__URL", "http://127.0.0.1:4222")],
            "nats.url: `http://127.0.0.1:4222` is not a NATS server address",
        ),
        (
            &[("SVC_GENERATION__DEFAULT_MODEL", "nope:nope")],
            "generation.default_model: `nope:nope` is not in the model registry",
        ),
        // With the demo on, its line ("cold generations are limited") must not come first.
        (
            &[("SVC_PUBLIC_DEMO__ENABLED", "true"), ("SVC_TOOL_CALLS__PER", "identiy")],
            "tool_calls.per must be identity or app, not `identiy`",
        ),
    ];
    for (env, expected) in rows {
        let output = run_with_env(&["serve", "--port", "0", "--data-dir", data_dir], env);
        let line = one_line_failure(&output);
        assert!(line.contains(expected), "{env:?}: {line}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn keys_commands_use_the_deployments_data_dir_from_config_or_environment() {
    let dir = temp_dir("svc-cli-keys-config");
    let config = dir.join("svc.toml");
    let from_config = dir.join("from-config");
    std::fs::write(&config, format!("[server]\ndata_dir = \"{}\"\n", from_config.display())).unwrap();
    let minted = run(&["keys", "mint", "--config", config.to_str().unwrap(), "--name", "laptop"]);
    assert!(minted.status.success(), "{minted:?}");
    assert!(from_config.join("keys.json").exists(), "--config's data_dir");

    let from_env = dir.join("from-env");
    let minted = run_with_env(
        &["keys", "mint"],
        &[("SVC_SERVER__DATA_DIR", from_env.to_str().unwrap())],
    );
    assert!(minted.status.success(), "{minted:?}");
    assert!(from_env.join("keys.json").exists(), "SVC_SERVER__DATA_DIR");
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused_by_the_running_server_at_once() {
    let dir = temp_dir("svc-cli-revoke");
    let data_dir = dir.to_str().unwrap();
    let minted = run(&["keys", "mint", "--data-dir", data_dir, "--name", "laptop"]);
    let stdout = String::from_utf8(minted.stdout).unwrap();
    let key = stdout.lines().last().unwrap().to_owned();

    let listed = String::from_utf8(run(&["keys", "list", "--data-dir", data_dir]).stdout).unwrap();
    let row = listed
        .lines()
        .find(|l| l.contains("laptop"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(!listed.contains(&key), "the list never shows a key");
    let prefix = row.split('\t').nth(2).unwrap();
    assert!(key.starts_with(prefix.trim_end_matches('…')), "{row}");

    let server = svc_tests::process::ServerProcess::start(BINARY, &dir, &[]);
    let status = |bearer: String| {
        let url = format!("{}/mcp", server.base);
        async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(bearer)
                .header("accept", "application/json, text/event-stream")
                .json(&serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(status(key.clone()).await, reqwest::StatusCode::OK);
    let revoked = run(&["keys", "revoke", prefix, "--data-dir", data_dir]);
    assert!(revoked.status.success(), "{revoked:?}");
    assert!(String::from_utf8_lossy(&revoked.stdout).contains("revoked key"));
    assert_eq!(status(key).await, reqwest::StatusCode::UNAUTHORIZED);
    let listed = String::from_utf8(run(&["keys", "list", "--data-dir", data_dir]).stdout).unwrap();
    assert!(!listed.contains("laptop"), "{listed}");
    let again = one_line_failure(&run(&["keys", "revoke", prefix, "--data-dir", data_dir]));
    assert!(again.contains("no key has that id or prefix"), "{again}");
    drop(server);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn migrate_applies_the_migrations_and_exits() {
    let dir = temp_dir("svc-cli-migrate");
    let data_dir = dir.to_str().unwrap();
    let first = run(&["migrate", "--data-dir", data_dir]);
    assert!(first.status.success(), "{first:?}");
    let stdout = String::from_utf8(first.stdout).unwrap();
    assert!(
        stdout.starts_with("applied ") && !stdout.starts_with("applied 0 "),
        "{stdout}"
    );
    let again = String::from_utf8(run(&["migrate", "--data-dir", data_dir]).stdout).unwrap();
    assert_eq!(again.trim(), "applied 0 migration(s); the database is up to date");
    std::fs::remove_dir_all(dir).ok();
}
