//! Helpers of the hosted sign-in, sign-up and password-reset tests (`hosted_sign_in.rs`,
//! `hosted_sign_up_mail.rs`, `hosted_password_reset.rs`): a hosted server with OAuth, signing in
//! at its consent page, asking for reset links, and Document 2's 429.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::smtp_sink::SmtpSink;
use svc_tests::{Auth, Backend};

use super::{master_key, postgres_available};
use crate::oauth::support::{Answer, OAuthApp};

pub const PASSWORD: &str = "correct horse battery staple";

/// A hosted server (bearers checked) with OAuth, on a fresh PostgreSQL database.
pub async fn hosted(test: &str, configure: impl FnOnce(&mut svc::Settings)) -> Option<OAuthApp> {
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
pub fn mail_through(s: &mut svc::Settings, sink: &SmtpSink) {
    s.mail.smtp_url = sink.url();
    s.mail.from = "svc tests <svc@example.org>".into();
    s.mail.poll_seconds = 1;
    s.mail.retry_base_seconds = 1;
}

pub async fn sign_in(app: &OAuthApp, params: &[(String, String)], email: &str, password: &str) -> Answer {
    app.consent(params, &[("email", email), ("password", password), ("action", "allow")])
        .await
}

/// The access token for `client_id` after signing in as `email`.
pub async fn token_for(app: &OAuthApp, client_id: &str, email: &str, password: &str) -> String {
    let params = app.request(client_id);
    let answer = sign_in(app, &params, email, password).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    let code = answer.param("code").expect("a code");
    let (status, _, body) = app.token(&app.token_form(client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

pub async fn ops_as(app: &OAuthApp, bearer: &str, tool: &str, arguments: Value) -> Value {
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
pub fn notice(answer: &Answer) -> String {
    let start = answer.body.find("role=\"alert\">").expect("a notice") + "role=\"alert\">".len();
    let end = answer.body[start..].find("</p>").unwrap() + start;
    answer.body[start..end].to_owned()
}

/// A sign-in with a wrong password from `address` (`X-Forwarded-For`).
pub async fn post_sign_in_from(
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

/// `POST /account/forgot` for `email`, from `address` (`X-Forwarded-For`) when one is given.
pub async fn forgot(app: &OAuthApp, email: &str, address: Option<&str>) -> reqwest::Response {
    let mut request = app.http.post(app.url("/account/forgot")).form(&[("email", email)]);
    if let Some(address) = address {
        request = request.header("x-forwarded-for", address);
    }
    request.send().await.unwrap()
}

/// Document 2's rate-limited login route: 429, `Retry-After`, and `retryAfter` mirroring it.
pub async fn assert_rate_limited(resp: reqwest::Response) {
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry_after), "{retry_after}");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["retryAfter"], retry_after);
    assert!(body["error"]["message"].is_string());
}
