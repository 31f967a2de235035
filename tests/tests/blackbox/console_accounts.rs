//! Hosted account sign-in at the console (docs/console.md, "Opening it"): on a hosted server an
//! account's email and password open the same HttpOnly session as a key, acting for the account's
//! user; a wrong password and an unknown email are refused alike; a server without accounts
//! refuses the form in words.

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend, TestApp};

use crate::console_session::{open, sign_in, tool};
use crate::hosted_support::accounts::{create_user, hosted_strict_app};

const PASSWORD: &str = "correct horse battery staple";

#[tokio::test]
async fn a_hosted_account_signs_in_with_its_email_and_password() {
    let test = "console_account_sign_in";
    let Some(app) = hosted_strict_app(test, |_| {}).await else {
        return;
    };
    let db = app.settings.server.database_url.clone();
    let user_id = create_user(&db, "ada@example.org", PASSWORD);

    let page = reqwest::get(format!("{}/console", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(r#"data-sign-in="account""#), "{page}");

    for (email, password) in [("ada@example.org", "wrong password!"), ("nobody@example.org", PASSWORD)] {
        let (status, headers, body) = sign_in(&app.base, json!({ "email": email, "password": password })).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{email}: {body}");
        assert_eq!(body["error"]["code"], "invalid_credentials");
        assert_eq!(body["error"]["message"], "the email or password is not right");
        assert!(headers.get("set-cookie").is_none());
    }
    let (status, _, body) = sign_in(
        &app.base,
        json!({ "email": "ada@example.org", "password": PASSWORD, "key": "svc_user_x" }),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "invalid_request");

    let (status, headers, body) = sign_in(&app.base, json!({ "email": "Ada@Example.org", "password": PASSWORD })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["principalId"], user_id.as_str());
    assert_eq!(body["appLocked"], false);
    let set_cookie = headers["set-cookie"].to_str().unwrap();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );

    // The session acts for the account: its wallet (with the first sign-in's welcome credit).
    let session = open(&app.base, json!({ "email": "ada@example.org", "password": PASSWORD })).await;
    let ledger = tool(&app.base, &session, "svc_ops_list_credit_transactions", json!({})).await;
    let kinds: Vec<&str> = ledger["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        vec!["free_credit"],
        "one welcome credit, on the first sign-in only"
    );
}

#[tokio::test]
async fn account_sign_in_attempts_share_the_consent_pages_budget() {
    let test = "console_account_budget";
    let Some(app) = hosted_strict_app(test, |_| {}).await else {
        return;
    };
    let db = app.settings.server.database_url.clone();
    create_user(&db, "grace@example.org", PASSWORD);
    // Ten attempts a window per account (`svc_domain::account::SIGN_IN_PER_ACCOUNT`).
    for _ in 0..10 {
        let (status, _, _) = sign_in(&app.base, json!({ "email": "grace@example.org", "password": "nope" })).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, headers, body) =
        sign_in(&app.base, json!({ "email": "grace@example.org", "password": PASSWORD })).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(headers.contains_key("retry-after"));
    assert_eq!(body["error"]["code"], "rate_limited");
}

#[tokio::test]
async fn a_server_without_accounts_refuses_email_sign_in() {
    let app = TestApp::spawn("console_no_accounts", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let (status, _, body) = sign_in(&app.base, json!({ "email": "ada@example.org", "password": PASSWORD })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "account_sign_in_unavailable");
}
