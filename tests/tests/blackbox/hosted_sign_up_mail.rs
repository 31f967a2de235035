//! Open sign-up at the consent page of a hosted server, with email verification through a real
//! SMTP server, and the mail outbox keeping mail until an SMTP server takes it.

use crate::hosted_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use svc_tests::smtp_sink::SmtpSink;

use hosted_support::scalar_text;
use hosted_support::sign_in::{PASSWORD, hosted, mail_through, notice};

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
