//! Password reset on a hosted server: requests with budgets of their own (Document 2's 429), the
//! same answer whether the address has an account (the link is queued after the answer), the
//! mailed link working once and spending the account's other links, a reset signing the account
//! out, and expired links swept by the server.

use crate::hosted_support;
use crate::oauth::support as oauth_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::smtp_sink::SmtpSink;

use hosted_support::accounts::create_user;
use hosted_support::sign_in::{
    PASSWORD, assert_rate_limited, forgot, hosted, mail_through, post_sign_in_from, sign_in, token_for,
};
use hosted_support::{execute, scalar_text};
use oauth_support::OAuthApp;

/// Reset requests have budgets of their own: a stranger asking for links for an account (each
/// mails its owner) is limited, and neither spends the owner's sign-in attempts nor is stopped
/// by them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_requests_have_their_own_budget() {
    let Some(app) = hosted("reset_budget", |s| s.oauth.trust_proxy = true).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let from = |i: u32| Some(format!("198.51.100.{i}"));
    for i in 0..3 {
        let asked = forgot(&app, "ada@example.org", from(i).as_deref()).await;
        assert_eq!(asked.status(), StatusCode::OK, "request {i}");
    }
    // As many refused as the owner's whole sign-in budget: none of them spends it.
    for i in 3..13 {
        assert_rate_limited(forgot(&app, "ada@example.org", from(i).as_deref()).await).await;
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
    let bob_reset = forgot(&app, "bob@example.org", Some("203.0.113.50")).await;
    assert_eq!(bob_reset.status(), StatusCode::OK, "the owner can still ask for a link");
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
    // The answers are the same (`a_reset_request_answers_alike_whether_the_address_has_an_account`).
    for email in ["ada@example.org", "nobody@example.org"] {
        assert_eq!(forgot(&app, email, None).await.status(), StatusCode::OK, "{email}");
    }

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
    forgot(&app, "ada@example.org", None).await;
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
    let asked = forgot(app, email, None).await;
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

/// Status, headers and page of an answer; of the headers that name one answer (its second, its
/// request id), only the name.
async fn observed(resp: reqwest::Response) -> (StatusCode, Vec<(String, String)>, String) {
    let status = resp.status();
    let of_this_answer = ["date", "x-request-id"];
    let mut headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = if of_this_answer.contains(&name.as_str()) {
                "(this answer's)"
            } else {
                value.to_str().unwrap()
            };
            (name.to_string(), value.to_owned())
        })
        .collect();
    headers.sort();
    (status, headers, resp.text().await.unwrap())
}

/// What a person sees of a reset request is the same whether the address has an account: the
/// link is looked up and queued after the answer. It is still mailed, also when asked for just
/// before the server stops (shutdown finishes that work before the database closes).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reset_request_answers_alike_whether_the_address_has_an_account() {
    let Some(sink) = SmtpSink::start("reset_answers_alike", 0) else {
        return;
    };
    let Some(mut app) = hosted("reset_answers_alike", |s| mail_through(s, &sink)).await else {
        return;
    };
    create_user(&app.app.settings.database_url(), "ada@example.org", PASSWORD);
    let known = observed(forgot(&app, "ada@example.org", None).await).await;
    let unknown = observed(forgot(&app, "nobody@example.org", None).await).await;
    assert_eq!(known.0, StatusCode::OK);
    assert_eq!(known, unknown, "the same answer whether the account exists");
    sink.wait_for("ada@example.org", "Reset your password", Duration::from_secs(20))
        .await;

    let asked = forgot(&app, "ada@example.org", None).await;
    assert_eq!(asked.status(), StatusCode::OK);
    app.app.restart(|_| {}).await;
    let started = Instant::now();
    let resets = || {
        sink.received()
            .iter()
            .filter(|m| m.to == ["ada@example.org"] && m.subject == "Reset your password")
            .count()
    };
    while resets() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the second link was never mailed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(sink.received().iter().all(|m| m.to != ["nobody@example.org"]));
}

/// Links never followed leave rows in `account_tokens`: the server sweeps the expired ones (as it
/// starts, then hourly, on every replica) and keeps the live ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expired_account_tokens_are_swept_by_the_server() {
    let Some(mut app) = hosted("account_token_sweep", |_| {}).await else {
        return;
    };
    let db = app.app.settings.database_url();
    execute(
        &db,
        "INSERT INTO account_tokens (token_hash, user_id, purpose, expires_at) VALUES \
         ('expired-reset', 'usr_a', 'reset_password', now() - interval '1 minute'), \
         ('expired-verify', 'usr_a', 'verify_email', now() - interval '2 days'), \
         ('live-verify', 'usr_a', 'verify_email', now() + interval '1 day')",
    )
    .await;
    app.app.restart(|_| {}).await;
    let kept = "SELECT string_agg(token_hash, ',' ORDER BY token_hash) FROM account_tokens";
    let started = Instant::now();
    while scalar_text(&db, kept).await != "live-verify" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "expired tokens never swept"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
