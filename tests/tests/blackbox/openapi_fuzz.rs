//! A schema-driven fuzz run: schemathesis (`tests/peers/.venv`, pinned in
//! `tests/peers/requirements.txt`) against the OpenAPI document the server serves at
//! `/openapi.json`, on a real `svc-under-test serve --oauth` in strict mode over loopback.
//!
//! Checks: no 5xx (`not_a_server_error`), and every answer conforms to the document (status code,
//! content type, headers, body schema). Bounded: 100 examples per operation (about ten seconds),
//! the whole run killed after five minutes. A client is registered and a key minted first; the
//! `client_id`, the redirect URI (query and form) and the consent form's `api_key` are pinned for
//! the fuzzer (`schemathesis.toml`), so authorization requests get past the client check into the
//! consent form, the approval (codes are minted) and the redirects.
//!
//! Like `tests/tests/blackbox/peers.rs`: without `tests/peers/install.sh` the test prints
//! `skipped: <name> (...)` and passes, unless `SVC_REQUIRE_PEERS=1`, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use svc_tests::external::{deps_present, run_with_deadline};
use svc_tests::process::ServerProcess;

const SERVER_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const REDIRECT: &str = "http://127.0.0.1:47613/callback";
const DEADLINE: Duration = Duration::from_secs(300);

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// Registers a client for [`REDIRECT`]; its `client_id`.
fn register_client(base: &str) -> String {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let answer: serde_json::Value = reqwest::Client::new()
            .post(format!("{base}/oauth/register"))
            .json(&serde_json::json!({ "redirect_uris": [REDIRECT], "client_name": "schemathesis" }))
            .send()
            .await
            .expect("register")
            .json()
            .await
            .expect("registration answer");
        answer["client_id"].as_str().expect("client_id").to_owned()
    })
}

#[test]
fn schemathesis_finds_no_server_error_and_no_divergence_from_the_document() {
    let schemathesis = peers_dir().join(".venv/bin/schemathesis");
    if !deps_present(
        "schemathesis_finds_no_server_error_and_no_divergence_from_the_document",
        std::slice::from_ref(&schemathesis),
        "SVC_REQUIRE_PEERS",
        "schemathesis",
        "run tests/peers/install.sh",
    ) {
        return;
    }
    let root = svc_tests::temp_dir("svc-openapi-fuzz");
    let data_dir = root.join("data");
    std::fs::create_dir_all(&data_dir).expect("data dir");
    let server = ServerProcess::start(SERVER_BINARY, &data_dir, &["--oauth"]);
    let client_id = register_client(&server.base);
    let key = svc::keys_file::KeysFile::in_data_dir(&data_dir)
        .mint(Some("schemathesis".into()), chrono::Utc::now())
        .expect("mint a key")
        .1;
    let config = root.join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            "[parameters]\nclient_id = \"{client_id}\"\nredirect_uri = \"{REDIRECT}\"\n\
             \"body.client_id\" = \"{client_id}\"\n\"body.redirect_uri\" = \"{REDIRECT}\"\n\
             \"body.api_key\" = \"{key}\"\n"
        ),
    )
    .expect("write schemathesis.toml");

    let run = schemathesis_run(&schemathesis, &config, &server.base, &root, &[]);
    let _ = std::fs::remove_dir_all(&root);
    assert_clean(&server.base, &run);
}

/// schemathesis with the checks and bounds above, against `base`, with `extra` arguments.
fn schemathesis_run(
    schemathesis: &Path,
    config: &Path,
    base: &str,
    root: &Path,
    extra: &[&str],
) -> svc_tests::external::Finished {
    let mut command = Command::new(schemathesis);
    command
        .arg("--config-file")
        .arg(config)
        .arg("run")
        .arg(format!("{base}/openapi.json"))
        .args(["--url", base])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,\
             response_headers_conformance,response_schema_conformance",
        ])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args(["--max-examples", "100", "--workers", "1", "--request-timeout", "10"])
        .args(["--generation-database", "none", "--no-color"])
        .args(extra)
        .current_dir(root);
    run_with_deadline(command, DEADLINE)
}

fn assert_clean(base: &str, run: &svc_tests::external::Finished) {
    assert!(
        run.succeeded(),
        "schemathesis against {base} {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        match run.status {
            Some(status) => format!("exited with {status}"),
            None => format!("did not finish within {DEADLINE:?}"),
        },
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout.contains(" passed") && !run.stdout.contains(" failed"),
        "no verdict:\n{}",
        run.stdout
    );
}

/// The hosted-only routes (the `/account/*` pages, the identity provider's callback) answer 404
/// on the server above; here they run for real, on a hosted server on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_on_the_hosted_account_pages() {
    let schemathesis = peers_dir().join(".venv/bin/schemathesis");
    let test = "schemathesis_finds_no_server_error_on_the_hosted_account_pages";
    if !deps_present(
        test,
        std::slice::from_ref(&schemathesis),
        "SVC_REQUIRE_PEERS",
        "schemathesis",
        "run tests/peers/install.sh",
    ) || !crate::hosted_support::postgres_available(test)
    {
        return;
    }
    let Some(app) = crate::hosted_support::accounts::hosted_strict_app(test, |_| {}).await else {
        return;
    };
    crate::hosted_support::accounts::create_user(
        &app.settings.database_url(),
        "fuzz@example.org",
        "correct horse battery staple",
    );
    let root = svc_tests::temp_dir("svc-openapi-fuzz-hosted");
    let config = root.join("schemathesis.toml");
    std::fs::write(&config, "[parameters]\n\"body.email\" = \"fuzz@example.org\"\n").expect("write schemathesis.toml");
    let base = app.base.clone();
    let run = {
        let (root, base) = (root.clone(), base.clone());
        tokio::task::spawn_blocking(move || {
            schemathesis_run(
                &schemathesis,
                &config,
                &base,
                &root,
                &["--include-path-regex", "^/account/"],
            )
        })
        .await
        .unwrap()
    };
    let _ = std::fs::remove_dir_all(&root);
    assert_clean(&base, &run);
}
