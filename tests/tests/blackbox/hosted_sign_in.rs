//! Signing in at the OAuth consent page of a hosted server: the key minted for the account (one
//! row per client, labelled with its name), the first sign-in's free credit, failures that never
//! say whether the email exists, the per-account and per-address budgets (Document 2's 429),
//! open sign-up with email verification through a real SMTP server, password reset, and the
//! official TypeScript SDK completing OAuth by signing in.

use crate::hosted_support;
use crate::oauth::support as oauth_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::smtp_sink::SmtpSink;
use svc_tests::{Auth, Backend};

use hosted_support::accounts::create_user;
use hosted_support::{master_key, postgres_available, scalar_text};
use oauth_support::{Answer, OAuthApp};

const PASSWORD: &str = "correct horse battery staple";

/// A hosted server (bearers checked) with OAuth, on a fresh PostgreSQL database.
async fn hosted(test: &str, configure: impl FnOnce(&mut svc::Settings)) -> Option<OAuthApp> {
    if !postgres_available(test) {
        return None;
    }
    OAuthApp::spawn(test, Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        configure(s);
    })
    .await
}

/// The mail settings that deliver through `sink`, checking every second.
fn mail_through(s: &mut svc::Settings, sink: &SmtpSink) {
    s.mail.smtp_url = sink.url();
    s.mail.from = "svc tests <svc@example.org>".into();
    s.mail.poll_seconds = 1;
    s.mail.retry_base_seconds = 1;
}

async fn sign_in(app: &OAuthApp, params: &[(String, String)], email: &str, password: &str) -> Answer {
    app.consent(params, &[("email", email), ("password", password), ("action", "allow")])
        .await
}

/// The access token for `client_id` after signing in as `email`.
async fn token_for(app: &OAuthApp, client_id: &str, email: &str, password: &str) -> String {
    let params = app.request(client_id);
    let answer = sign_in(app, &params, email, password).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    let code = answer.param("code").expect("a code");
    let (status, _, body) = app.token(&app.token_form(client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

async fn ops_as(app: &OAuthApp, bearer: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply: Value = app
        .http
        .post(app.url("/ops"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(reply["result"]["isError"].is_null(), "{tool}: {reply}");
    reply["result"]["structuredContent"].clone()
}

/// The notice of a re-shown consent form.
fn notice(answer: &Answer) -> String {
    let start = answer.body.find("role=\"alert\">").expect("a notice") + "role=\"alert\">".len();
    let end = answer.body[start..].find("</p>").unwrap() + start;
    answer.body[start..end].to_owned()
}

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

async fn post_sign_in_from(
    app: &OAuthApp,
    params: &[(String, String)],
    email: &str,
    address: &str,
) -> reqwest::Response {
    let mut form: Vec<(String, String)> = params.to_vec();
    form.extend([
        ("email".to_owned(), email.to_owned()),
        ("password".to_owned(), "a wrong password here".to_owned()),
    ]);
    app.http
        .post(app.url("/oauth/authorize"))
        .header("x-forwarded-for", address)
        .form(&form)
        .send()
        .await
        .unwrap()
}

async fn assert_rate_limited(resp: reqwest::Response) {
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry_after), "{retry_after}");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["retryAfter"], retry_after);
    assert!(body["error"]["message"].is_string());
}

/// Reset requests have budgets of their own: a stranger asking for links for an account (each
/// mails its owner) is limited, and neither spends the owner's sign-in attempts nor is stopped
/// by them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_requests_have_their_own_budget() {
    let Some(app) = hosted("reset_budget", |s| s.oauth.trust_proxy = true).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let forgot = |from: String| {
        let http = app.http.clone();
        let url = app.url("/account/forgot");
        async move {
            http.post(url)
                .header("x-forwarded-for", from)
                .form(&[("email", "ada@example.org")])
                .send()
                .await
                .unwrap()
        }
    };
    for i in 0..3 {
        assert_eq!(
            forgot(format!("198.51.100.{i}")).await.status(),
            StatusCode::OK,
            "request {i}"
        );
    }
    // As many refused as the owner's whole sign-in budget: none of them spends it.
    for i in 3..13 {
        assert_rate_limited(forgot(format!("198.51.100.{i}")).await).await;
    }

    // Ada signs in all the same; a stranger's wrong guesses then leave her resets alone.
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    assert_eq!(
        sign_in(&app, &params, "ada@example.org", PASSWORD).await.status,
        StatusCode::FOUND
    );
    create_user(&app.app.settings.database_url(), "bob@example.org", PASSWORD);
    for i in 0..10 {
        let resp = post_sign_in_from(&app, &params, "bob@example.org", &format!("203.0.113.{i}")).await;
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "guess {i}");
    }
    let bob_reset = app
        .http
        .post(app.url("/account/forgot"))
        .header("x-forwarded-for", "203.0.113.50")
        .form(&[("email", "bob@example.org")])
        .send()
        .await
        .unwrap();
    assert_eq!(bob_reset.status(), StatusCode::OK, "the owner can still ask for a link");
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
async fn open_sign_up_at_consent_mails_a_verification_link_that_works_once() {
    let Some(sink) = SmtpSink::start("open_sign_up", 0) else {
        return;
    };
    let Some(app) = hosted("open_sign_up", |s| {
        s.hosted.signup = "open".into();
        mail_through(s, &sink);
    })
    .await
    else {
        return;
    };
    let db = app.app.settings.database_url();
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    let page = app.authorize(&params).await;
    assert!(page.body.contains("value=\"signup\""), "sign-up is offered");

    let short = app
        .consent(
            &params,
            &[
                ("email", "new@example.org"),
                ("password", "too short"),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    assert_eq!(notice(&short), "A password must be at least 12 characters.");

    let answer = app
        .consent(
            &params,
            &[
                ("email", "new@example.org"),
                ("password", PASSWORD),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert!(answer.param("code").is_some());

    let mail = sink
        .wait_for("new@example.org", "Confirm your email address", Duration::from_secs(20))
        .await;
    assert_eq!(mail.from, "svc@example.org");
    let link = mail.link("/account/verify?token=").expect("a verification link");
    assert!(link.starts_with(&app.app.base), "{link}");
    let verified = "SELECT CASE WHEN email_verified_at IS NULL THEN 'no' ELSE 'yes' END FROM accounts";
    assert_eq!(scalar_text(&db, verified).await, "no");
    // Opening the link (a mail scanner, a link preview) confirms nothing.
    for _ in 0..2 {
        let opened = app.http.get(&link).send().await.unwrap();
        assert_eq!(opened.status(), StatusCode::OK);
        assert_eq!(scalar_text(&db, verified).await, "no", "a GET changes nothing");
    }
    let first = svc_tests::verify_link::confirm(&app.http, &link).await;
    assert_eq!(first.status(), StatusCode::OK);
    assert!(first.text().await.unwrap().contains("Your email address is confirmed"));
    assert_eq!(scalar_text(&db, verified).await, "yes");
    let again = svc_tests::verify_link::confirm(&app.http, &link).await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST, "a link works once");

    // Signing up again with the same address signs in (or is refused), never a second account.
    let twice = app
        .consent(
            &params,
            &[
                ("email", "NEW@example.org"),
                ("password", "another password 123"),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(twice.status, StatusCode::UNAUTHORIZED);
    // A password the rule refuses is refused the same for an address with an account as for
    // one without (above): the answer does not tell which addresses have accounts.
    let short_again = app
        .consent(
            &params,
            &[
                ("email", "new@example.org"),
                ("password", "too short"),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(short_again.status, StatusCode::BAD_REQUEST);
    assert_eq!(notice(&short_again), "A password must be at least 12 characters.");
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_password_is_reset_through_the_mailed_link() {
    let Some(sink) = SmtpSink::start("password_reset", 0) else {
        return;
    };
    let Some(app) = hosted("password_reset", |s| mail_through(s, &sink)).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let forgot = |email: &'static str| {
        let http = app.http.clone();
        let url = app.url("/account/forgot");
        async move {
            let resp = http.post(url).form(&[("email", email)]).send().await.unwrap();
            (resp.status(), resp.text().await.unwrap())
        }
    };
    let known = forgot("ada@example.org").await;
    let unknown = forgot("nobody@example.org").await;
    assert_eq!(known.0, StatusCode::OK);
    assert_eq!(known, unknown, "the same answer whether the account exists");

    let mail = sink
        .wait_for("ada@example.org", "Reset your password", Duration::from_secs(20))
        .await;
    let link = mail.link("/account/reset?token=").expect("a reset link");
    let token = link.split("token=").nth(1).unwrap().to_owned();

    // Sent, the outbox row keeps the link without its token (only the token's sha256 is kept,
    // in `account_tokens`). The row is stamped after the transport took the mail.
    let db = app.app.settings.database_url();
    let reset_sent =
        "SELECT CASE WHEN sent_at IS NULL THEN 'no' ELSE 'yes' END FROM mail_outbox WHERE kind = 'reset_password'";
    let started = Instant::now();
    while scalar_text(&db, reset_sent).await != "yes" {
        assert!(started.elapsed() < Duration::from_secs(10), "sent_at never stamped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        scalar_text(
            &db,
            "SELECT payload->>'url' FROM mail_outbox WHERE kind = 'reset_password'"
        )
        .await,
        link.replace(&token, "redacted"),
        "the link's address stays for the operator"
    );
    assert_eq!(
        scalar_text(
            &db,
            &format!("SELECT count(*)::text FROM mail_outbox WHERE payload::text LIKE '%{token}%'")
        )
        .await,
        "0",
        "no outbox row holds the sent token"
    );
    let form = app.http.get(&link).send().await.unwrap();
    assert_eq!(form.status(), StatusCode::OK);
    assert!(form.text().await.unwrap().contains("name=\"password\""));

    let set = |password: &'static str| {
        let http = app.http.clone();
        let url = app.url("/account/reset");
        let token = token.clone();
        async move {
            http.post(url)
                .form(&[("token", token.as_str()), ("password", password)])
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        set("short").await,
        StatusCode::BAD_REQUEST,
        "the rule, before the token is spent"
    );
    // A second link, asked for before the first is used: a reset spends it too (a link left in
    // a mailbox someone else reads must not reset the password again).
    forgot("ada@example.org").await;
    let started = Instant::now();
    let second = loop {
        let other = sink
            .received()
            .iter()
            .filter(|m| m.to == ["ada@example.org"] && m.subject == "Reset your password")
            .filter_map(|m| m.link("/account/reset?token="))
            .find(|l| *l != link);
        if let Some(other) = other {
            break other.split("token=").nth(1).unwrap().to_owned();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no second reset mail");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(set("a brand new passphrase").await, StatusCode::OK);
    assert_eq!(
        set("yet another passphrase").await,
        StatusCode::BAD_REQUEST,
        "the link works once"
    );
    let with_second = app
        .http
        .post(app.url("/account/reset"))
        .form(&[("token", second.as_str()), ("password", "a third passphrase!")])
        .send()
        .await
        .unwrap();
    assert_eq!(with_second.status(), StatusCode::BAD_REQUEST, "the other link is spent");

    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    assert_eq!(
        sign_in(&app, &params, "ada@example.org", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    token_for(&app, &client, "ada@example.org", "a brand new passphrase").await;
    // No mail went to the unknown address.
    assert!(sink.received().iter().all(|m| m.to != ["nobody@example.org"]));
}

/// Asks for a reset of `email`'s password and sets `password` with the mailed link.
async fn reset_through_mail(app: &OAuthApp, sink: &SmtpSink, email: &str, password: &str) {
    let asked = app
        .http
        .post(app.url("/account/forgot"))
        .form(&[("email", email)])
        .send()
        .await
        .unwrap();
    assert_eq!(asked.status(), StatusCode::OK);
    let mail = sink
        .wait_for(email, "Reset your password", Duration::from_secs(20))
        .await;
    let link = mail.link("/account/reset?token=").expect("a reset link");
    let token = link.split("token=").nth(1).unwrap().to_owned();
    let set = app
        .http
        .post(app.url("/account/reset"))
        .form(&[("token", token.as_str()), ("password", password)])
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), StatusCode::OK, "{email}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reset_signs_the_account_out_and_revokes_keys_made_before_its_address_was_proven() {
    use crate::console_session::{console_ops, open};
    use hosted_support::accounts::create_user_with;
    let Some(sink) = SmtpSink::start("reset_sign_out", 0) else {
        return;
    };
    let Some(app) = hosted("reset_sign_out", |s| mail_through(s, &sink)).await else {
        return;
    };
    let db = app.app.settings.database_url();
    // Ada's address was never verified: whoever chose her password may not be Ada. Grace's
    // address was vouched for by the operator.
    create_user(&db, "ada@example.org", PASSWORD);
    create_user_with(&db, "grace@example.org", PASSWORD, &["--verified"]);

    let client = app.client("Claude Desktop").await;
    let mut held = Vec::new();
    for email in ["ada@example.org", "grace@example.org"] {
        let token = token_for(&app, &client, email, PASSWORD).await;
        assert_eq!(app.mcp_status(&token).await, StatusCode::OK, "{email}");
        let session = open(&app.app.base, json!({ "email": email, "password": PASSWORD })).await;
        held.push((email, token, session));
    }
    for (email, _, _) in &held {
        reset_through_mail(&app, &sink, email, "a brand new passphrase").await;
    }
    for (email, token, session) in &held {
        let (status, body) = console_ops(
            &app.app.base,
            Some(&session.cookie),
            Some(&session.csrf),
            "tools/list",
            json!({}),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{email}'s console session ended: {body}"
        );
        let expected = if *email == "ada@example.org" {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::OK
        };
        assert_eq!(
            app.mcp_status(token).await,
            expected,
            "{email}: a key made before the address was proven is revoked; a verified account keeps its hosts"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mail_waits_in_the_outbox_until_an_smtp_server_takes_it() {
    let Some(sink) = SmtpSink::start("mail_retries", 2) else {
        return;
    };
    // First no SMTP server at all: the account's mail is queued, nothing is lost.
    let Some(mut app) = hosted("mail_retries", |s| {
        s.hosted.signup = "open".into();
    })
    .await
    else {
        return;
    };
    let db = app.app.settings.database_url();
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    let signed_up = app
        .consent(
            &params,
            &[
                ("email", "queued@example.org"),
                ("password", PASSWORD),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(signed_up.status, StatusCode::FOUND, "{}", signed_up.body);
    let sent = "SELECT CASE WHEN sent_at IS NULL THEN 'no' ELSE 'yes' END FROM mail_outbox WHERE recipient = 'queued@example.org'";
    assert_eq!(scalar_text(&db, sent).await, "no");

    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(scalar_text(&db, sent).await, "no", "still queued");
    // The server comes back with an SMTP server that refuses the first two attempts (451).
    app.app.restart(|s| mail_through(s, &sink)).await;
    let mail = sink
        .wait_for(
            "queued@example.org",
            "Confirm your email address",
            Duration::from_secs(30),
        )
        .await;
    assert!(mail.link("/account/verify?token=").is_some());
    assert_eq!(sink.received().len(), 1, "sent once");
    // The row is stamped after the transport took it.
    let started = Instant::now();
    while scalar_text(&db, sent).await != "yes" {
        assert!(started.elapsed() < Duration::from_secs(10), "sent_at never stamped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let attempts = scalar_text(
        &db,
        "SELECT attempts::text FROM mail_outbox WHERE recipient = 'queued@example.org'",
    )
    .await;
    assert_eq!(attempts, "3", "two refusals, then the delivery");
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
