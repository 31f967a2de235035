//! Pairing: the boot pair code is exchanged for a bearer at `POST /_svc/pair`, rate limited.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::Strict => a_pair_code_mints_a_bearer_that_works_on_mcp);

async fn pair(app: &TestApp, code: &str) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    pair_at(app, &app.base, code).await
}

async fn pair_at(app: &TestApp, base: &str, code: &str) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let resp = app
        .client
        .post(format!("{base}/_svc/pair"))
        .json(&json!({ "pairCode": code, "clientName": "test" }))
        .send()
        .await
        .unwrap();
    (
        resp.status(),
        resp.headers().clone(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

async fn a_pair_code_mints_a_bearer_that_works_on_mcp(app: TestApp) {
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    assert_eq!(code.len(), 6);
    assert!(code.chars().all(|c| c.is_ascii_digit()));
    let wrong = if code == "000000" { "000001" } else { "000000" };
    let (status, _, body) = pair(&app, wrong).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "invalid_pair_code");
    let (status, headers, body) = pair(&app, &code).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(headers["cache-control"], "no-store", "a bearer key is kept by no cache");
    assert_eq!(body["tokenType"], "Bearer");
    let token = body["accessToken"].as_str().unwrap();
    let (status, _, reply) = app
        .post_raw(
            Some(token),
            json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(reply["result"]["tools"].is_array());
}

#[tokio::test]
async fn pairing_is_rate_limited_per_address() {
    let app = TestApp::spawn("pair_rate_limit", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let mut statuses = vec![];
    for _ in 0..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
        statuses.push(pair(&app, "999999x").await.0);
    }
    assert!(statuses.iter().all(|s| *s == StatusCode::UNAUTHORIZED), "{statuses:?}");
    let (status, headers, body) = pair(&app, app.pair_code.as_deref().unwrap()).await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "even the right code waits once the window is spent"
    );
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry_after >= 1);
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["retryAfter"], retry_after);
}

/// Behind a proxy (`oauth.trust_proxy`), each client the proxy names has its own budget, on
/// `/_svc/pair` as on the consent form; without it, the peer counts and a forged header is ignored.
#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget() {
    for trust_proxy in [true, false] {
        let app = TestApp::spawn_configured("pair_proxy", Backend::Sqlite, Auth::Strict, move |s| {
            s.oauth.trust_proxy = trust_proxy;
        })
        .await
        .unwrap();
        let attempt = |forwarded_for: &'static str| {
            app.client
                .post(format!("{}/_svc/pair", app.base))
                .header("x-forwarded-for", forwarded_for)
                .json(&json!({ "pairCode": "999999x" }))
                .send()
        };
        for _ in 0..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
            assert_eq!(
                attempt("198.51.100.7").await.unwrap().status(),
                StatusCode::UNAUTHORIZED
            );
        }
        assert_eq!(
            attempt("198.51.100.7").await.unwrap().status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        let other_client = attempt("203.0.113.9").await.unwrap().status();
        let expected = if trust_proxy {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::TOO_MANY_REQUESTS
        };
        assert_eq!(other_client, expected, "trust_proxy = {trust_proxy}");
    }
}

/// Guesses spread over many addresses (cheap: an IPv6 /48 is 65,536 budgets) meet one budget
/// for all of them together; then even the right code waits.
#[tokio::test]
async fn guesses_from_many_addresses_share_one_hourly_budget() {
    let app = TestApp::spawn_configured("pair_budget_all", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.trust_proxy = true;
    })
    .await
    .unwrap();
    let attempt = |n: u32, code: &str| {
        app.client
            .post(format!("{}/_svc/pair", app.base))
            .header("x-forwarded-for", format!("2001:db8:{n:x}::1"))
            .json(&json!({ "pairCode": code }))
            .send()
    };
    let budget = svc_http::PAIR_ATTEMPTS_PER_HOUR_IN_ALL;
    let right = app.pair_code.clone().unwrap();
    for n in 0..budget - 1 {
        let status = attempt(n, "999999x").await.unwrap().status();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "guess {n}, from its own /64");
    }
    // The right code spends none of the budget: it bounds guessing, not pairing clients.
    for n in budget..budget + 2 {
        let status = attempt(n, &right).await.unwrap().status();
        assert_eq!(status, StatusCode::CREATED, "the right code from address {n}");
    }
    let last_guess = attempt(budget + 2, "999999x").await.unwrap().status();
    assert_eq!(last_guess, StatusCode::UNAUTHORIZED, "the budget's last guess");
    let fresh = budget + 3;
    let refused = attempt(fresh, app.pair_code.as_deref().unwrap()).await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
}

/// The budget is counted in the database: guesses spent on one replica are spent on every
/// replica of the deployment (PostgreSQL; skipped without it).
#[tokio::test]
async fn replicas_share_one_pair_code_budget() {
    let Some(app) = TestApp::spawn("pair_budget_replicas", Backend::Postgres, Auth::Strict).await else {
        return;
    };
    let other = app.replica().await;
    for _ in 0..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
        assert_eq!(pair(&app, "999999x").await.0, StatusCode::UNAUTHORIZED);
    }
    let (status, headers, body) = pair_at(&app, &other.base, "999999x").await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "limited on the other replica: {body}"
    );
    assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
}

/// The code lives in the database: every replica prints the code in force and accepts it, and a
/// code spent through one replica is spent on all (PostgreSQL; skipped without it).
#[tokio::test]
async fn replicas_print_and_accept_one_pair_code() {
    let Some(app) = TestApp::spawn("pair_code_replicas", Backend::Postgres, Auth::Strict).await else {
        return;
    };
    let other = app.replica().await;
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    assert_eq!(
        other.pair_code.as_deref(),
        Some(code.as_str()),
        "one code for the deployment"
    );
    let (status, _, body) = pair_at(&app, &other.base, &code).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "the code printed by one replica pairs on another: {body}"
    );
    let token = body["accessToken"].as_str().expect("a bearer");
    let (status, _, reply) = app
        .post_raw(
            Some(token),
            json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

#[tokio::test]
async fn dev_mode_has_nothing_to_pair() {
    let app = TestApp::spawn("pair_dev", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    assert!(app.pair_code.is_none());
    assert_eq!(pair(&app, "123456").await.0, StatusCode::NOT_FOUND);
}

async fn pair_named(app: &TestApp, body: Value) -> (StatusCode, Value) {
    let resp = app
        .client
        .post(format!("{}/_svc/pair", app.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

/// A `clientName` sent empty or as whitespace breaks the key-name rule like any other bad name
/// (422, nothing minted); one left out names the key "paired client".
#[tokio::test]
async fn a_blank_client_name_is_422_and_an_absent_one_is_named_for_pairing() {
    let app = TestApp::spawn("pair_blank_name", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    for blank in ["", " \t "] {
        let (status, body) = pair_named(&app, json!({ "pairCode": code, "clientName": blank })).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{blank:?}: {body}");
        assert_eq!(
            body,
            json!({ "error": {
                "code": "invalid_client_name",
                "message": "clientName: must be 1 to 120 characters once trimmed, got 0",
            } }),
            "{blank:?}"
        );
    }
    let ops = crate::ops_support::Client::of(&app);
    let keys = ops.ok("svc_ops_list_connector_keys", json!({})).await;
    assert_eq!(keys, json!({ "keys": [] }), "no key was minted");
    let (status, body) = pair_named(&app, json!({ "pairCode": code })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let keys = ops.ok("svc_ops_list_connector_keys", json!({})).await;
    let names: Vec<&Value> = keys["keys"].as_array().unwrap().iter().map(|k| &k["name"]).collect();
    assert_eq!(names, [&json!("paired client")], "{keys}");
}

/// The attempt could not be counted (the database lost its table of windows): 503
/// `internal_error`, no guess let through, and the answer is one `/openapi.json` documents.
#[tokio::test]
async fn a_pair_attempt_that_cannot_be_counted_is_a_documented_503() {
    use sea_orm::{ConnectionTrait, Database};
    let app = TestApp::spawn("pair_uncounted", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let db = Database::connect(app.settings.database_url()).await.expect("connect");
    db.execute_unprepared("DROP TABLE rate_windows").await.expect("drop");
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    let (status, body) = pair_named(&app, json!({ "pairCode": code, "clientName": "laptop" })).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        body,
        json!({ "error": { "code": "internal_error", "message": "the attempt could not be counted; try again" } })
    );
    let document: Value = reqwest::get(format!("{}/openapi.json", app.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let documented = &document["paths"]["/_svc/pair"]["post"]["responses"]["503"];
    assert_eq!(
        documented["content"]["application/json; charset=utf-8"]["schema"]["$ref"], "#/components/schemas/PairError",
        "{documented}"
    );
}
