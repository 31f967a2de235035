//! Signing in at the OAuth consent page of a hosted server: the key minted for the account (one
//! row per client, labelled with its name), the first sign-in's free credit, failures that never
//! say whether the email exists, the per-account and per-address budgets (Document 2's 429), and
//! the official TypeScript SDK completing OAuth by signing in. Sign-up and the mail outbox:
//! `hosted_sign_up_mail.rs`; password reset: `hosted_password_reset.rs`.

use crate::hosted_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use hosted_support::accounts::create_user;
use hosted_support::scalar_text;
use hosted_support::sign_in::{
    PASSWORD, assert_rate_limited, hosted, notice, ops_as, post_sign_in_from, sign_in, token_for,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_in_mints_one_key_per_client_and_grants_the_free_credit_once() {
    let Some(app) = hosted("sign_in_mints_keys", |s| s.hosted.free_credit_cents = 250).await else {
        return;
    };
    let db = app.app.settings.database_url();
    let user_id = create_user(&db, "ada@example.org", PASSWORD);

    let desktop = app.client("Claude Desktop").await;
    let page = app.authorize(&app.request(&desktop)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("name=\"email\"") && page.body.contains("name=\"password\""));
    assert!(!page.body.contains("value=\"signup\""), "sign-up is closed by default");

    let token = token_for(&app, &desktop, "Ada@Example.org", PASSWORD).await;
    assert_eq!(app.mcp_status(&token).await, StatusCode::OK);
    let editor = app.client("Code Editor").await;
    let second = token_for(&app, &editor, "ada@example.org", PASSWORD).await;
    assert_ne!(token, second);

    let keys = ops_as(&app, &second, "svc_ops_list_connector_keys", json!({})).await;
    let mut names: Vec<&str> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["Claude Desktop", "Code Editor"]);
    let owners = scalar_text(
        &db,
        "SELECT string_agg(DISTINCT owner_user_id, ',') FROM connector_keys",
    )
    .await;
    assert_eq!(owners, user_id, "the keys belong to the account");

    // Two sign-ins, one free credit.
    let ledger = ops_as(&app, &token, "svc_ops_list_credit_transactions", json!({})).await;
    let kinds: Vec<&str> = ledger["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["free_credit"], "{ledger}");
    let balance = ops_as(&app, &token, "svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(balance["balanceCents"], 250);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_sign_in_never_says_whether_the_email_exists() {
    let Some(app) = hosted("sign_in_failures", |_| {}).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);

    // Five rounds, a wrong password then an unknown email in each, and the fastest of each kind
    // compared: a busy machine slows single attempts, rarely all five of one kind.
    let (mut known, mut unknown) = (Duration::MAX, Duration::MAX);
    for round in 0..5 {
        let nobody = format!("nobody{round}@example.org");
        for (email, fastest) in [("ada@example.org", &mut known), (nobody.as_str(), &mut unknown)] {
            let started = Instant::now();
            let answer = sign_in(&app, &params, email, &format!("not the password, take {round}")).await;
            *fastest = (*fastest).min(started.elapsed());
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{email}");
            assert_eq!(notice(&answer), "The email or password is not right.", "{email}");
        }
    }
    // Similar work: an unknown email is hashed against a dummy hash, not answered at once.
    println!("wrong password: {known:?}; unknown email: {unknown:?}");
    assert!(unknown * 3 >= known, "unknown {unknown:?} vs known {known:?}");

    // Blank fields and two credentials at once are told apart from a refusal.
    let blank = app.consent(&params, &[("email", ""), ("password", "")]).await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);
    assert_eq!(notice(&blank), "Enter your email and password, or a key.");
    let both = app
        .consent(
            &params,
            &[
                ("email", "ada@example.org"),
                ("password", PASSWORD),
                ("api_key", "svc_user_x"),
            ],
        )
        .await;
    assert_eq!(both.status, StatusCode::BAD_REQUEST);
    // Sign-up is closed: asking for it does not create the account, and answers the same for
    // an address that has one (a wrong password there must not tell it apart).
    for email in ["new@example.org", "ada@example.org"] {
        let closed = app
            .consent(
                &params,
                &[
                    ("email", email),
                    ("password", "not the password 1"),
                    ("action", "signup"),
                ],
            )
            .await;
        assert_eq!(closed.status, StatusCode::FORBIDDEN, "{email}");
        assert_eq!(
            notice(&closed),
            "sign-up is closed on this server: ask its operator for an account",
            "{email}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sign_in_is_rate_limited_per_account_and_per_address() {
    let Some(app) = hosted("sign_in_rate_limits", |s| s.oauth.trust_proxy = true).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);

    // Per account: 10 attempts in the window from anywhere; then even the right password waits.
    for i in 0..10 {
        let resp = post_sign_in_from(&app, &params, "ada@example.org", &format!("198.51.100.{i}")).await;
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "attempt {i}");
    }
    assert_rate_limited(post_sign_in_from(&app, &params, "ada@example.org", "198.51.100.77").await).await;
    let mut form: Vec<(String, String)> = params.clone();
    form.extend([
        ("email".to_owned(), "ada@example.org".to_owned()),
        ("password".to_owned(), PASSWORD.to_owned()),
    ]);
    let right = app
        .http
        .post(app.url("/oauth/authorize"))
        .header("x-forwarded-for", "198.51.100.78")
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_rate_limited(right).await;

    // Per address: 30 attempts whatever the accounts (unknown emails count too).
    for i in 0..30 {
        let resp = post_sign_in_from(&app, &params, &format!("guess{i}@example.org"), "203.0.113.9").await;
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "attempt {i}");
    }
    assert_rate_limited(post_sign_in_from(&app, &params, "other@example.org", "203.0.113.9").await).await;
    // Another address is not limited by it.
    let elsewhere = post_sign_in_from(&app, &params, "other@example.org", "203.0.113.10").await;
    assert_eq!(elsewhere.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_typescript_sdk_completes_oauth_by_signing_in() {
    let peers = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers");
    if !svc_tests::external::deps_present(
        "the_typescript_sdk_completes_oauth_by_signing_in",
        &[peers.join("node_modules/@modelcontextprotocol/sdk/package.json")],
        "SVC_REQUIRE_PEERS",
        "peers",
        "run tests/peers/install.sh",
    ) {
        return;
    }
    let Some(app) = hosted("ts_sdk_sign_in", |s| s.hosted.signup = "open".into()).await else {
        return;
    };
    let db = app.app.settings.database_url();
    create_user(&db, "ada@example.org", PASSWORD);
    let run = |email: &'static str, sign_up: bool| {
        let mcp_url = app.app.mcp_url();
        let peers = peers.clone();
        tokio::task::spawn_blocking(move || {
            let mut command = std::process::Command::new("node");
            command
                .arg(peers.join("ts-sdk-oauth.mjs"))
                .arg(mcp_url)
                .current_dir(&peers)
                .env("SVC_PEER_EMAIL", email)
                .env("SVC_PEER_PASSWORD", PASSWORD)
                .env("SVC_PEER_SIGN_UP", if sign_up { "1" } else { "0" });
            svc_tests::external::run_with_deadline(command, Duration::from_secs(120))
        })
    };
    for (email, sign_up) in [("ada@example.org", false), ("newcomer@example.org", true)] {
        let finished = run(email, sign_up).await.unwrap();
        assert!(
            finished.succeeded() && finished.stdout.contains("ts-sdk-oauth: OK"),
            "{email}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            finished.stdout,
            finished.stderr
        );
    }
    let labels = scalar_text(
        &db,
        "SELECT string_agg(a.email || '=' || k.name, ',' ORDER BY a.email) FROM connector_keys k JOIN accounts a ON a.user_id = k.owner_user_id",
    )
    .await;
    assert_eq!(
        labels,
        "ada@example.org=svc ts-sdk oauth peer,newcomer@example.org=svc ts-sdk oauth peer"
    );
}
