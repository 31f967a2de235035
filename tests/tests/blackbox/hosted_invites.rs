//! Joining an org by invite on a hosted server (PostgreSQL, a real SMTP sink): the invite mail
//! carries a one-time `/account/invite?token=` link; opening it offers to create an account for
//! the invited address (`hosted.signup` `invite` or `open`) or to sign in to one, and accepting
//! makes the account a member with the invite's role. Every refusal is seen with its status.

use crate::hosted_support;
use crate::ops_support;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::TestApp;
use svc_tests::smtp_sink::SmtpSink;

use hosted_support::accounts::{create_user, create_user_with, hosted_strict_app, mint_key};
use hosted_support::scalar_text;
use ops_support::Client;

const PASSWORD: &str = "correct horse battery staple";
const SUBJECT: &str = "You are invited to an organisation";

/// A hosted server with `hosted.signup = signup`, mailing through `sink`.
async fn hosted_with_mail(test: &str, signup: &str, sink: &SmtpSink) -> Option<TestApp> {
    let signup = signup.to_owned();
    let url = sink.url();
    hosted_strict_app(test, move |s| {
        s.hosted.signup = signup;
        s.mail.smtp_url = url;
        s.mail.from = "svc tests <svc@example.org>".into();
        s.mail.poll_seconds = 1;
        s.mail.retry_base_seconds = 1;
    })
    .await
}

/// The org's owner (an account with a key) and a new org of theirs.
async fn owner_with_org(app: &TestApp) -> (Client, Value) {
    let db = app.settings.database_url();
    create_user(&db, "owner@example.org", PASSWORD);
    let owner = Client::with_bearer(app, &mint_key(&db, "owner@example.org", None));
    let org = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    (owner, org)
}

/// Invites `email` as `role`; the invite and the link its mail carries.
async fn invite(owner: &Client, sink: &SmtpSink, org: &Value, email: &str, role: &str) -> (Value, String) {
    let invite = owner
        .ok(
            "svc_ops_invite_to_org",
            json!({ "orgId": org["orgId"], "email": email, "role": role }),
        )
        .await;
    let mail = sink.wait_for(email, SUBJECT, Duration::from_secs(20)).await;
    let link = mail.link("/account/invite?token=").expect("an invite link");
    (invite, link)
}

fn token_of(link: &str) -> String {
    link.split("token=").nth(1).unwrap().to_owned()
}

async fn open(app: &TestApp, link: &str) -> (StatusCode, String) {
    let resp = app.client.get(link).send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn post(app: &TestApp, form: &[(&str, &str)]) -> (StatusCode, String) {
    let resp = app
        .client
        .post(format!("{}/account/invite", app.base))
        .form(form)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn create(app: &TestApp, token: &str, password: &str) -> (StatusCode, String) {
    post(app, &[("token", token), ("action", "create"), ("password", password)]).await
}

async fn sign_in(app: &TestApp, token: &str, email: &str, password: &str) -> (StatusCode, String) {
    post(
        app,
        &[
            ("token", token),
            ("action", "sign-in"),
            ("email", email),
            ("password", password),
        ],
    )
    .await
}

/// The orgs `email`'s account is in, as `(orgId, role)`.
async fn memberships(app: &TestApp, email: &str) -> Vec<(String, String)> {
    let key = mint_key(&app.settings.database_url(), email, None);
    let listed = Client::with_bearer(app, &key).ok("svc_ops_list_orgs", json!({})).await;
    listed["orgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["orgId"].as_str().unwrap().to_owned(),
                o["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_invite_link_creates_the_account_once_and_joins_the_org_with_the_invited_role() {
    let Some(sink) = SmtpSink::start("invite_creates_account", 0) else {
        return;
    };
    let Some(app) = hosted_with_mail("invite_creates_account", "invite", &sink).await else {
        return;
    };
    let db = app.settings.database_url();
    let (owner, org) = owner_with_org(&app).await;
    let (_, link) = invite(&owner, &sink, &org, "ada@example.org", "admin").await;
    assert!(link.starts_with(&app.base), "{link}");
    let token = token_of(&link);
    let stored = scalar_text(&db, "SELECT token_hash FROM org_invite_links").await;
    assert_eq!(stored.len(), 64, "only the sha256 is kept");
    assert!(!stored.contains(&token));

    let (status, page) = open(&app, &link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("ada@example.org") && page.contains("admin"), "{page}");
    assert!(
        page.contains("value=\"create\""),
        "invite sign-up offers to create: {page}"
    );

    let (status, page) = create(&app, &token, "too short").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("A password must be at least 12 characters."), "{page}");
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");

    let (status, page) = create(&app, &token, PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("You joined the organisation"), "{page}");
    let verified = "SELECT CASE WHEN email_verified_at IS NULL THEN 'no' ELSE 'yes' END FROM accounts WHERE email = 'ada@example.org'";
    assert_eq!(scalar_text(&db, verified).await, "yes", "the link proves the address");
    let org_id = org["orgId"].as_str().unwrap().to_owned();
    assert_eq!(
        memberships(&app, "ada@example.org").await,
        [(org_id, "admin".to_owned())]
    );

    // The link works once: a second use, either way, is a conflict.
    assert_eq!(create(&app, &token, PASSWORD).await.0, StatusCode::CONFLICT);
    assert_eq!(
        sign_in(&app, &token, "ada@example.org", PASSWORD).await.0,
        StatusCode::CONFLICT
    );
    assert_eq!(open(&app, &link).await.0, StatusCode::CONFLICT);
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_invite_binds_an_existing_account_by_signing_in_and_refuses_each_bad_use() {
    let Some(sink) = SmtpSink::start("invite_refusals", 0) else {
        return;
    };
    let Some(app) = hosted_with_mail("invite_refusals", "invite", &sink).await else {
        return;
    };
    let db = app.settings.database_url();
    let (owner, org) = owner_with_org(&app).await;

    // An address that has an account: create is a conflict, a wrong password 401, signing in joins.
    create_user(&db, "bob@example.org", PASSWORD);
    let (_, link) = invite(&owner, &sink, &org, "bob@example.org", "member").await;
    let token = token_of(&link);
    let (status, page) = open(&app, &link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("value=\"create\""), "the address has an account: {page}");
    assert_eq!(create(&app, &token, PASSWORD).await.0, StatusCode::CONFLICT);
    let (status, page) = sign_in(&app, &token, "bob@example.org", "not the password").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(page.contains("The email or password is not right."), "{page}");
    let (status, page) = sign_in(&app, &token, "bob@example.org", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let org_id = org["orgId"].as_str().unwrap().to_owned();
    assert_eq!(
        memberships(&app, "bob@example.org").await,
        [(org_id, "member".to_owned())]
    );

    // An unknown token: 404 on the page and on the form.
    let unknown = format!("{}/account/invite?token={}", app.base, "x".repeat(43));
    assert_eq!(open(&app, &unknown).await.0, StatusCode::NOT_FOUND);
    assert_eq!(create(&app, &"x".repeat(43), PASSWORD).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        sign_in(&app, "", "bob@example.org", PASSWORD).await.0,
        StatusCode::NOT_FOUND
    );

    // A revoked invite: 410.
    let (revoked, link) = invite(&owner, &sink, &org, "carol@example.org", "member").await;
    owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": revoked["inviteId"] }))
        .await;
    let (status, page) = open(&app, &link).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("This invite was revoked"), "{page}");
    assert_eq!(create(&app, &token_of(&link), PASSWORD).await.0, StatusCode::GONE);

    // An expired invite: 410.
    let (expired, link) = invite(&owner, &sink, &org, "dave@example.org", "member").await;
    scalar_text(
        &db,
        &format!(
            "UPDATE org_invites SET expires_at = now() - interval '1 minute' WHERE id = '{}' RETURNING 'x'",
            expired["inviteId"].as_str().unwrap()
        ),
    )
    .await;
    let (status, page) = open(&app, &link).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(page.contains("This invite has expired"), "{page}");
    assert_eq!(create(&app, &token_of(&link), PASSWORD).await.0, StatusCode::GONE);
    assert_eq!(
        scalar_text(&db, "SELECT count(*)::text FROM accounts").await,
        "2",
        "no refused use created an account"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn closed_sign_up_refuses_create_with_403_and_open_sign_up_allows_it() {
    let Some(sink) = SmtpSink::start("invite_closed_signup", 0) else {
        return;
    };
    let Some(app) = hosted_with_mail("invite_closed_signup", "closed", &sink).await else {
        return;
    };
    let (owner, org) = owner_with_org(&app).await;
    let (_, link) = invite(&owner, &sink, &org, "ada@example.org", "member").await;
    let (status, page) = open(&app, &link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("value=\"create\""), "closed: no create form: {page}");
    let (status, page) = create(&app, &token_of(&link), PASSWORD).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(page.contains("Sign-up is closed on this server"), "{page}");
    // The operator creates the account; the same link then signs in and joins.
    create_user(&app.settings.database_url(), "ada@example.org", PASSWORD);
    let (status, page) = sign_in(&app, &token_of(&link), "", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "a blank email is the invited one: {page}");

    let Some(sink) = SmtpSink::start("invite_open_signup", 0) else {
        return;
    };
    let Some(app) = hosted_with_mail("invite_open_signup", "open", &sink).await else {
        return;
    };
    let (owner, org) = owner_with_org(&app).await;
    let (_, link) = invite(&owner, &sink, &org, "eve@example.org", "member").await;
    assert_eq!(create(&app, &token_of(&link), PASSWORD).await.0, StatusCode::OK);
    assert_eq!(memberships(&app, "eve@example.org").await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_invite_page_is_absent_outside_hosted_mode() {
    let Some(app) = TestApp::spawn(
        "invite_page_self_hosted",
        svc_tests::Backend::Sqlite,
        svc_tests::Auth::Strict,
    )
    .await
    else {
        return;
    };
    let (status, _) = open(&app, &format!("{}/account/invite?token=abc", app.base)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// `POST /_svc/invites/<id>/accept` as `bearer`, with `body` as JSON when given.
async fn accept_by_id(app: &TestApp, bearer: &str, invite: &Value, body: Option<Value>) -> (StatusCode, Value) {
    let mut req = app
        .client
        .post(format!(
            "{}/_svc/invites/{}/accept",
            app.base,
            invite["inviteId"].as_str().unwrap()
        ))
        .bearer_auth(bearer);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_accept_route_takes_the_links_token_or_the_invitees_own_account_not_the_id_alone() {
    let Some(sink) = SmtpSink::start("invite_accept_route", 0) else {
        return;
    };
    let Some(app) = hosted_with_mail("invite_accept_route", "invite", &sink).await else {
        return;
    };
    let db = app.settings.database_url();
    let (owner, org) = owner_with_org(&app).await;
    create_user_with(&db, "ada@example.org", PASSWORD, &["--verified"]);
    create_user(&db, "bob@example.org", PASSWORD);
    create_user(&db, "eve@example.org", PASSWORD);
    let ada = mint_key(&db, "ada@example.org", None);
    let eve = mint_key(&db, "eve@example.org", None);
    let bob = mint_key(&db, "bob@example.org", None);
    let (to_ada, _) = invite(&owner, &sink, &org, "Ada@example.org", "member").await;

    // Someone else holding the id alone, or a wrong token, is told the invite does not exist.
    for body in [None, Some(json!({ "token": "x".repeat(43) }))] {
        let (status, answer) = accept_by_id(&app, &bob, &to_ada, body.clone()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body:?}: {answer}");
        assert_eq!(answer["error"]["code"], "org_invite_not_found");
    }
    let (status, answer) = accept_by_id(&app, &bob, &to_ada, Some(json!({ "tok": 1 }))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_request");

    // An account whose address is the invited one but not proven (anyone may sign up with any
    // address under open sign-up) is not the invitee.
    let (to_eve, _) = invite(&owner, &sink, &org, "eve@example.org", "member").await;
    let (status, answer) = accept_by_id(&app, &eve, &to_eve, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(answer["error"]["code"], "org_invite_not_found");

    // The invitee's own account (its proven address is the invited one) accepts with the id.
    let (status, answer) = accept_by_id(&app, &ada, &to_ada, None).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["role"], "member");

    // The mailed link's token entitles whoever shows it.
    let (to_carol, link) = invite(&owner, &sink, &org, "carol@example.org", "admin").await;
    let (status, answer) = accept_by_id(&app, &bob, &to_carol, Some(json!({ "token": token_of(&link) }))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["role"], "admin");
    let org_id = org["orgId"].as_str().unwrap().to_owned();
    assert_eq!(
        memberships(&app, "bob@example.org").await,
        [(org_id, "admin".to_owned())]
    );
}
