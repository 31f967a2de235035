//! Per-account quotas of hosted mode (docs/hosted.md, "Quotas"), each reached with a small
//! configured value on PostgreSQL: the exact refusal (or, for keys and console sessions, the
//! oldest one ended), and another account not affected.

use crate::console_session::{Session, console_ops, open};
use crate::hosted_provider_keys::{GOOD, MODEL, use_fake_openai};
use crate::hosted_support;
use crate::oauth::support::OAuthApp;
use crate::ops_support;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::TestApp;

use hosted_support::accounts::{create_user, hosted_strict_app, mint_key};
use hosted_support::sign_in::{hosted, ops_as, token_for};
use hosted_support::{contract, scalar_text};
use ops_support::Client;

const PASSWORD: &str = "correct horse battery staple";

/// An account with a key: `(user id, bearer)`.
fn account(app: &TestApp, email: &str) -> (String, String) {
    let db = app.settings.database_url();
    let user_id = create_user(&db, email, PASSWORD);
    (user_id, mint_key(&db, email, None))
}

/// `tools/call` of `tool` on `/mcp` as `bearer`: status, headers, body.
async fn mcp_as(app: &TestApp, bearer: &str, tool: &str, arguments: Value) -> (StatusCode, HeaderMap, Value) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": tool, "arguments": arguments } });
    app.post_raw(Some(bearer), body.to_string()).await
}

async fn handshake_as(app: &TestApp, bearer: &str, intent: &str) -> String {
    let (status, _, body) = mcp_as(
        app,
        bearer,
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract() } }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["structuredContent"]["handshakeId"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned()
}

fn render_args(handshake_id: &str) -> Value {
    json!({ "handshakeId": handshake_id, "props": { "title": "Order 42" }, "infra": { "model": MODEL } })
}

/// With `hosted.generations_per_principal = 1`, an account whose generation runs (held at the
/// provider) is refused a second one with -32014 `GENERATION_OVERLOADED`, HTTP 503 and
/// `Retry-After`, although the queue has room; another account's render is admitted at once;
/// the refused handshake stays intact and renders once the first generation is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_account_cannot_hold_more_generations_than_its_cap() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    fake.pause();
    let Some(app) = hosted_strict_app("quota_generations", |s| {
        use_fake_openai(s, &fake);
        s.generation.concurrency = 4;
        s.generation.max_waiting = 4;
        s.generation.max_wait_seconds = 30;
        s.hosted.generations_per_principal = 1;
    })
    .await
    else {
        return;
    };
    let (_, greedy) = account(&app, "greedy@example.org");
    let (_, modest) = account(&app, "modest@example.org");
    for bearer in [&greedy, &modest] {
        Client::with_bearer(&app, bearer)
            .ok(
                "svc_ops_set_provider_key",
                json!({ "provider": "openai", "plaintextKey": "sk-own-key-0001" }),
            )
            .await;
    }
    let first = handshake_as(&app, &greedy, "first").await;
    let second = handshake_as(&app, &greedy, "second").await;
    let theirs = handshake_as(&app, &modest, "theirs").await;

    let running = {
        let app_base = (app.client.clone(), app.mcp_url(), greedy.clone(), first.clone());
        tokio::spawn(async move {
            let (client, url, bearer, id) = app_base;
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": { "name": "svc_render", "arguments": render_args(&id) } });
            let resp = client.post(url).bearer_auth(bearer).json(&body).send().await.unwrap();
            (resp.status(), resp.json::<Value>().await.unwrap())
        })
    };
    fake.wait_for_requests(1).await;

    let (status, headers, body) = mcp_as(&app, &greedy, "svc_render", render_args(&second)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers["retry-after"], "30");
    assert_eq!(body["error"]["code"], -32014, "{body}");
    assert_eq!(
        body["error"]["data"],
        json!({ "code": "GENERATION_OVERLOADED", "retryAfterSeconds": 30 })
    );
    assert_eq!(fake.request_count(), 1, "the refused render never reached the provider");

    // Another account is not held back by the first one's cap.
    let theirs_running = {
        let args = (app.client.clone(), app.mcp_url(), modest.clone(), theirs.clone());
        tokio::spawn(async move {
            let (client, url, bearer, id) = args;
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": { "name": "svc_render", "arguments": render_args(&id) } });
            let resp = client.post(url).bearer_auth(bearer).json(&body).send().await.unwrap();
            (resp.status(), resp.json::<Value>().await.unwrap())
        })
    };
    fake.wait_for_requests(2).await;

    fake.resume();
    for handle in [running, theirs_running] {
        let (status, body) = handle.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    }
    // The refused handshake is intact, and renders now that the first generation is done.
    let (status, _, again) = mcp_as(&app, &greedy, "svc_render", render_args(&second)).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["result"]["structuredContent"]["outcome"], "rendered", "{again}");
}

/// With `hosted.invite_mails_per_hour = 2`, an account's third invite in the hour is refused
/// `rate_limited` with `retryAfterMs` and queues no mail; inviting an address already pending
/// again queues no mail and does not count; another account still invites.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_account_cannot_queue_more_invite_mails_per_hour_than_its_budget() {
    let Some(app) = hosted_strict_app("quota_invite_mails", |s| {
        s.hosted.invite_mails_per_hour = 2;
    })
    .await
    else {
        return;
    };
    let (_, greedy) = account(&app, "inviter@example.org");
    let (_, modest) = account(&app, "other-inviter@example.org");
    let greedy = Client::with_bearer(&app, &greedy);
    let modest = Client::with_bearer(&app, &modest);
    let org = greedy.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let invite = |email: &str| json!({ "orgId": org["orgId"], "email": email, "role": "member" });

    greedy.ok("svc_ops_invite_to_org", invite("a@example.org")).await;
    let again = greedy.ok("svc_ops_invite_to_org", invite("a@example.org")).await;
    assert_eq!(
        again["reused"], true,
        "a reused invite sends no mail and is not counted"
    );
    greedy.ok("svc_ops_invite_to_org", invite("b@example.org")).await;

    let refused = greedy
        .refused("svc_ops_invite_to_org", invite("c@example.org"), "rate_limited")
        .await;
    let retry_after_ms = refused["retryAfterMs"].as_u64().expect("retryAfterMs");
    assert!((1..=3_600_000).contains(&retry_after_ms), "{refused}");
    assert_eq!(
        refused["message"],
        format!("too many invites: at most 2 invite mails per hour from one account; retry in {retry_after_ms} ms")
    );
    let db = app.settings.database_url();
    let queued_for_c = scalar_text(
        &db,
        "SELECT COUNT(*)::text FROM mail_outbox WHERE recipient = 'c@example.org'",
    )
    .await;
    assert_eq!(queued_for_c, "0", "the refused invite queued no mail");

    // Another account's budget is its own.
    let theirs = modest.ok("svc_ops_create_org", json!({ "name": "Other" })).await;
    modest
        .ok(
            "svc_ops_invite_to_org",
            json!({ "orgId": theirs["orgId"], "email": "c@example.org", "role": "member" }),
        )
        .await;
}

/// With `hosted.orgs_per_account = 2`, an account's third org is refused `org_limit_reached`
/// and not stored; another account still creates orgs. (Memberships of other roles do not
/// count: the repository test `racing_org_creations_never_pass_the_bound_of_owned_orgs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_account_cannot_own_more_orgs_than_its_cap() {
    let Some(app) = hosted_strict_app("quota_orgs", |s| {
        s.hosted.orgs_per_account = 2;
    })
    .await
    else {
        return;
    };
    let (_, greedy) = account(&app, "founder@example.org");
    let (_, modest) = account(&app, "other-founder@example.org");
    let greedy = Client::with_bearer(&app, &greedy);
    let modest = Client::with_bearer(&app, &modest);
    greedy.ok("svc_ops_create_org", json!({ "name": "One" })).await;
    greedy.ok("svc_ops_create_org", json!({ "name": "Two" })).await;

    let refused = greedy
        .refused("svc_ops_create_org", json!({ "name": "Three" }), "org_limit_reached")
        .await;
    assert_eq!(
        refused["message"],
        "you own 2 orgs, the most one account may own on this server is 2"
    );
    let orgs = greedy.ok("svc_ops_list_orgs", json!({})).await;
    let names: Vec<&str> = orgs["orgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["One", "Two"], "the refused org was not stored");

    // Another account's cap is its own.
    modest.ok("svc_ops_create_org", json!({ "name": "Three" })).await;
    modest.ok("svc_ops_create_org", json!({ "name": "Four" })).await;
}

/// `tools/list` on `/mcp` with a revoked key answers as Document 2 says a revoked key is
/// answered: HTTP 401 (-32007 UNAUTHORIZED, with the Bearer challenge).
async fn assert_refused_as_revoked(app: &OAuthApp, bearer: &str) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    let (status, headers, body) = app.app.post_raw(Some(bearer), body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], -32007, "{body}");
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
}

/// The status of each of the caller's keys, by name.
async fn key_statuses(app: &OAuthApp, bearer: &str) -> Vec<(String, String)> {
    let listed = ops_as(app, bearer, "svc_ops_list_connector_keys", json!({})).await;
    let mut statuses: Vec<(String, String)> = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_owned(),
                k["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    statuses.sort();
    statuses
}

/// With `hosted.connector_keys_per_account = 2`, an account's third sign-in (from a third
/// client, so no earlier key of the same client is superseded) revokes its oldest key: that key
/// is refused on `/mcp` as a revoked key is, the two newer ones still work, and the key list
/// shows it revoked. A key minted on `/ops` counts as a sign-in's does; another account's keys
/// are its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_in_past_the_connector_key_cap_revokes_the_oldest_key() {
    let Some(app) = hosted("quota_connector_keys", |s| {
        s.hosted.connector_keys_per_account = 2;
    })
    .await
    else {
        return;
    };
    let db = app.app.settings.database_url();
    create_user(&db, "ada@example.org", PASSWORD);
    create_user(&db, "grace@example.org", PASSWORD);
    let theirs = token_for(&app, &app.client("Their Desktop").await, "grace@example.org", PASSWORD).await;
    let mut tokens = Vec::new();
    for name in ["Desktop", "Editor", "Terminal"] {
        let client = app.client(name).await;
        tokens.push(token_for(&app, &client, "ada@example.org", PASSWORD).await);
    }

    assert_refused_as_revoked(&app, &tokens[0]).await;
    for token in &tokens[1..] {
        assert_eq!(app.mcp_status(token).await, StatusCode::OK);
    }
    let named = |rows: &[(&str, &str)]| -> Vec<(String, String)> {
        rows.iter().map(|(n, s)| ((*n).to_owned(), (*s).to_owned())).collect()
    };
    assert_eq!(
        key_statuses(&app, &tokens[2]).await,
        named(&[("Desktop", "revoked"), ("Editor", "active"), ("Terminal", "active")])
    );

    // A key the account mints on /ops is counted as a sign-in's: the oldest live one goes.
    let issued = ops_as(
        &app,
        &tokens[2],
        "svc_ops_issue_connector_key",
        json!({ "name": "Script" }),
    )
    .await;
    assert_refused_as_revoked(&app, &tokens[1]).await;
    assert_eq!(app.mcp_status(&tokens[2]).await, StatusCode::OK);
    assert_eq!(
        app.mcp_status(issued["plaintextKey"].as_str().unwrap()).await,
        StatusCode::OK
    );

    // Another account's key is not counted with these.
    assert_eq!(app.mcp_status(&theirs).await, StatusCode::OK);
}

/// `GET /console/session` with a session's cookie: its status and body.
async fn console_session_status(base: &str, session: &Session) -> (StatusCode, Value) {
    let resp = reqwest::Client::new()
        .get(format!("{base}/console/session"))
        .header("cookie", &session.cookie)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

/// With `hosted.console_sessions_per_account = 2`, an account's third console sign-in ends its
/// oldest session: that cookie is answered 401 `signed_out`, as after signing out, on the page's
/// session route and on `/console/ops`; the two newer sessions, and another account's, still
/// work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_to_the_console_past_the_session_cap_ends_the_oldest_session() {
    let Some(app) = hosted_strict_app("quota_console_sessions", |s| {
        s.hosted.console_sessions_per_account = 2;
    })
    .await
    else {
        return;
    };
    let db = app.settings.database_url();
    create_user(&db, "ada@example.org", PASSWORD);
    create_user(&db, "grace@example.org", PASSWORD);
    let theirs = open(&app.base, json!({ "email": "grace@example.org", "password": PASSWORD })).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(open(&app.base, json!({ "email": "ada@example.org", "password": PASSWORD })).await);
    }

    let (status, body) = console_session_status(&app.base, &sessions[0]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "signed_out", "{body}");
    let oldest = &sessions[0];
    let (status, body) = console_ops(
        &app.base,
        Some(&oldest.cookie),
        Some(&oldest.csrf),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "signed_out", "{body}");

    for session in sessions[1..].iter().chain([&theirs]) {
        let (status, body) = console_session_status(&app.base, session).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = console_ops(
            &app.base,
            Some(&session.cookie),
            Some(&session.csrf),
            "tools/list",
            json!({}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}
