//! Sign-ins hash with argon2id, 19 MiB of memory per hash while it runs. A burst of sign-ins from
//! many addresses, each within its own rate budget, runs a few hashes at a time in working
//! memory kept between them: the server's peak memory grows by a few hashes, not by one per
//! attempt, and not by what the allocator would keep of 48 fresh allocations.

use crate::hosted_support::{master_key, postgres_available};

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::process::ServerProcess;
use svc_tests::{Backend, ScratchDatabase, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const ATTEMPTS: usize = 48;
/// argon2id's memory per hash (`domain::account::password::MEMORY_KIB`).
const HASH_MIB: u64 = 19;
/// Hashes at once at most (`application/src/services/accounts/hashing.rs`), fewer on fewer cores.
const MOST_SLOTS: usize = 4;
/// What the burst's requests take besides their hashes.
const REQUESTS_MIB: u64 = 48;

/// The process's peak resident memory so far, in KiB (`VmHWM` of `/proc/<pid>/status`).
fn peak_resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's /proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line")
}

async fn sign_in_from(http: &reqwest::Client, base: &str, client_id: &str, n: usize) -> (StatusCode, String) {
    let form = [
        ("response_type", "code".to_owned()),
        ("client_id", client_id.to_owned()),
        ("redirect_uri", "http://127.0.0.1:9/callback".to_owned()),
        (
            "code_challenge",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".to_owned(),
        ),
        ("code_challenge_method", "S256".to_owned()),
        ("state", "s".to_owned()),
        ("scope", "mcp".to_owned()),
        ("email", format!("nobody{n}@example.org")),
        ("password", format!("not anyone's password {n}")),
    ];
    let resp = http
        .post(format!("{base}/oauth/authorize"))
        .header("x-forwarded-for", format!("198.51.100.{n}"))
        .form(&form)
        .send()
        .await
        .expect("a sign-in answer");
    (resp.status(), resp.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_of_sign_ins_grows_memory_by_a_few_hashes_only() {
    let test = "a_burst_of_sign_ins_grows_memory_by_a_few_hashes_only";
    if !postgres_available(test) {
        return;
    }
    let dir = temp_dir("svc-password-hashing");
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &dir).await else {
        return;
    };
    let config = dir.join("svc.toml");
    std::fs::write(
        &config,
        format!(
            "[hosted]\nenabled = true\nmaster_keys = [\"{}\"]\n\n[oauth]\ntrust_proxy = true\n",
            master_key("k1", 3)
        ),
    )
    .unwrap();
    let server = ServerProcess::start(
        BINARY,
        &dir,
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            &database.url,
            "--hosted",
        ],
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let registered: Value = http
        .post(format!("{}/oauth/register", server.base))
        .json(&json!({ "redirect_uris": ["http://127.0.0.1:9/callback"], "client_name": "burst" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().expect("a client id").to_owned();

    // One sign-in first, so the baseline holds what any hash leaves behind.
    let (status, body) = sign_in_from(&http, &server.base, &client_id, 0).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let before = peak_resident_kib(server.pid());

    let burst = (1..=ATTEMPTS).map(|n| {
        let (http, base, client_id) = (http.clone(), server.base.clone(), client_id.clone());
        tokio::spawn(async move { sign_in_from(&http, &base, &client_id, n).await })
    });
    // Past the slots and the 16 waiting per slot, an attempt is told the server is busy.
    for answer in futures_util::future::join_all(burst).await {
        let (status, body) = answer.unwrap();
        match status {
            StatusCode::UNAUTHORIZED => assert!(body.contains("The email or password is not right."), "{body}"),
            StatusCode::SERVICE_UNAVAILABLE => assert!(body.contains("The server is busy"), "{body}"),
            other => panic!("{other}: {body}"),
        }
    }
    let grown_mib = peak_resident_kib(server.pid()).saturating_sub(before) / 1024;
    let slots = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MOST_SLOTS) as u64;
    println!("{ATTEMPTS} concurrent sign-ins, {slots} hashing slots: peak resident memory grew {grown_mib} MiB");
    // All at once would be ATTEMPTS hashes (912 MiB); a working memory per slot is `slots` of
    // them, and the burst's requests themselves take a few MiB more.
    let bound = slots * HASH_MIB + REQUESTS_MIB;
    assert!(
        grown_mib <= bound,
        "{ATTEMPTS} sign-ins at once grew the peak by {grown_mib} MiB (bound {bound} MiB)"
    );
}
