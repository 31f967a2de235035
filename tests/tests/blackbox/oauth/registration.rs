//! `POST /oauth/register`: every rule of Document 2 with its exact error, 201 without a secret,
//! and the per-address rate limit.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend};

use crate::oauth::support::OAuthApp;

oauth_scenarios!(Auth::Strict => a_registration_answers_201_without_a_secret);
// More refusals than one address may register: each row comes from its own (proxied) address.
oauth_scenarios!(Auth::Strict, |s: &mut svc::Settings| s.oauth.trust_proxy = true => every_registration_rule_has_its_error);

async fn every_registration_rule_has_its_error(app: OAuthApp) {
    let ok = "https://client.example.com/callback";
    let eleven: Vec<&str> = vec![ok; 11];
    let too_long = format!("{ok}?pad={}", "p".repeat(2048));
    let rows: Vec<(Value, &str)> = vec![
        (json!({}), "invalid_redirect_uri"),
        (json!({ "redirect_uris": [too_long] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": [] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": ok }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": [ok, 7] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": eleven }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": ["/callback"] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": ["callback"] }), "invalid_redirect_uri"),
        (
            json!({ "redirect_uris": ["https://client.example.com/cb#frag"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["https://*.example.com/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["http://client.example.com/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["http://192.168.1.5:8080/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["javascript:alert(1)"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["data:text/html,<script>1</script>"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["blob:https://client.example.com/x"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["file:///etc/passwd"] }),
            "invalid_redirect_uri",
        ),
        (json!({ "redirect_uris": ["about:blank"] }), "invalid_redirect_uri"),
        (
            json!({ "redirect_uris": [ok, "javascript:alert(1)"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": [ok], "client_name": "n".repeat(101) }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [ok], "client_name": "" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [ok], "client_name": "line\nbreak" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [ok], "client_name": "evil\u{202E}txt.exe" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [ok], "client_name": 42 }),
            "invalid_client_metadata",
        ),
        (json!([ok]), "invalid_client_metadata"),
        // serde_json's raw-value marker: once parsed into a `Value` this name was the string
        // it holds, and markers nested in each other's strings overflowed the server's stack.
        (
            json!({ "redirect_uris": [ok], "client_name": { "$serde_json::private::RawValue": "\"laptop\"" } }),
            "invalid_client_metadata",
        ),
    ];
    for (n, (body, error)) in rows.into_iter().enumerate() {
        let (status, headers, answer) = app.register_from(body.clone(), Some(&format!("192.0.2.{n}"))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["error"], error, "{body}: {answer}");
        assert!(answer["error_description"].is_string(), "{answer}");
        assert_eq!(headers["cache-control"], "no-store");
    }
    let resp = app
        .http
        .post(app.url("/oauth/register"))
        .header("content-type", "application/json")
        .header("x-forwarded-for", "192.0.2.200")
        .body("{ not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(resp.json::<Value>().await.unwrap()["error"], "invalid_client_metadata");
}

async fn a_registration_answers_201_without_a_secret(app: OAuthApp) {
    let uris = json!([
        "https://client.example.com/callback",
        "http://127.0.0.1:33418/cb",
        "http://[::1]:8080/cb",
        "http://localhost/cb",
        "app-name://callback",
        "com.example.app:/oauth2redirect",
        "https://client.example.com/a",
        "https://client.example.com/b",
        "https://client.example.com/c",
        "https://client.example.com/d",
    ]);
    let name = "é".repeat(100);
    let (status, headers, client) = app
        .register(json!({
            "redirect_uris": uris,
            "client_name": name,
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "scope": "mcp",
        }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    assert_eq!(headers["cache-control"], "no-store");
    assert!(
        client["client_id"].as_str().is_some_and(|id| id.len() >= 16),
        "{client}"
    );
    assert_eq!(client["redirect_uris"], uris);
    assert_eq!(client["client_name"], name);
    assert_eq!(client["grant_types"], json!(["authorization_code"]));
    assert_eq!(client["response_types"], json!(["code"]));
    assert_eq!(client["token_endpoint_auth_method"], "none");
    assert!(client.get("client_secret").is_none(), "no secret, ever: {client}");

    let (status, _, unnamed) = app
        .register(json!({ "redirect_uris": ["https://c.example.com/cb"] }))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(unnamed.get("client_name").is_none(), "{unnamed}");
    assert_ne!(unnamed["client_id"], client["client_id"]);
}

fn valid() -> Value {
    json!({ "redirect_uris": ["https://client.example.com/cb"] })
}

#[tokio::test]
async fn the_eleventh_registration_from_one_address_is_rate_limited() {
    let app = OAuthApp::spawn("register_rate_limit", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    for n in 1..=svc_http::REGISTRATIONS_PER_WINDOW {
        // Without trust_proxy, X-Forwarded-For does not pick the window.
        let forwarded = format!("198.51.100.{n}");
        let (status, _, body) = app.register_from(valid(), Some(&forwarded)).await;
        assert_eq!(status, StatusCode::CREATED, "registration {n}: {body}");
    }
    let (status, headers, body) = app.register(valid()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    // A fixed 10-minute window opened by the first registration: the wait is (almost) all of
    // it, not the minute a token bucket would take to refill one registration.
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    let window = svc_http::REGISTRATION_WINDOW_SECONDS;
    assert!((window - 60..=window).contains(&retry_after), "{retry_after}");
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["retryAfter"], retry_after);
}

/// The window is counted in the database: registrations on one replica count on every replica
/// (PostgreSQL; skipped without it).
#[tokio::test]
async fn replicas_share_the_registration_window() {
    let Some(app) = OAuthApp::spawn("register_replicas", Backend::Postgres, Auth::Strict, |_| {}).await else {
        return;
    };
    let other = app.app.replica().await;
    for n in 1..=svc_http::REGISTRATIONS_PER_WINDOW {
        let (status, _, body) = app.register(valid()).await;
        assert_eq!(status, StatusCode::CREATED, "registration {n}: {body}");
    }
    let resp = app
        .http
        .post(format!("{}/oauth/register", other.base))
        .json(&valid())
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "limited on the other replica"
    );
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_window_follows_x_forwarded_for() {
    let app = OAuthApp::spawn("register_trust_proxy", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.trust_proxy = true;
    })
    .await
    .unwrap();
    let client_a = "198.51.100.7, 203.0.113.1";
    for n in 1..=svc_http::REGISTRATIONS_PER_WINDOW {
        let (status, _, _) = app.register_from(valid(), Some(client_a)).await;
        assert_eq!(status, StatusCode::CREATED, "registration {n}");
    }
    assert_eq!(
        app.register_from(valid(), Some(client_a)).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    // The proxy's own (last) entry decides; a spoofed first entry does not buy a new window.
    assert_eq!(
        app.register_from(valid(), Some("192.0.2.99, 203.0.113.1")).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        app.register_from(valid(), Some("203.0.113.2")).await.0,
        StatusCode::CREATED
    );
}

/// The registration could not be counted (the database lost its table of windows): 503
/// `temporarily_unavailable`, nothing registered, and the answer is one `/openapi.json` documents.
#[tokio::test]
async fn a_registration_that_cannot_be_counted_is_a_documented_503() {
    use sea_orm::{ConnectionTrait, Database};
    let app = OAuthApp::spawn("register_uncounted", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let db = Database::connect(app.app.settings.database_url())
        .await
        .expect("connect");
    db.execute_unprepared("DROP TABLE rate_windows").await.expect("drop");
    let (status, headers, body) = app.register(valid()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(
        body,
        json!({ "error": "temporarily_unavailable", "error_description": "the request could not be counted; try again" })
    );
    let (_, _, document) = app.get_json("/openapi.json").await;
    let documented = &document["paths"]["/oauth/register"]["post"]["responses"]["503"];
    assert_eq!(
        documented["content"]["application/json; charset=utf-8"]["schema"]["$ref"], "#/components/schemas/OAuthError",
        "{documented}"
    );
}
