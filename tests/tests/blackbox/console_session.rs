//! The operator console's sessions (docs/console.md): the pair code or a key is exchanged at
//! `POST /console/session` for an HttpOnly cookie; `/console/ops` runs the `/ops` tools with it,
//! but only with the session's CSRF token in `X-CSRF-Token`; revoking the key a session was
//! opened with ends the session; sessions live in the database, so every replica honours them.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(mariadb, Auth::Strict => a_pair_code_opens_a_session_that_needs_its_csrf_token);
on_every_backend!(Auth::Strict => revoking_the_key_ends_its_console_session);

/// A console session as a browser holds it: the cookie and the CSRF token the page keeps.
pub(crate) struct Session {
    pub(crate) cookie: String,
    pub(crate) csrf: String,
}

pub(crate) async fn sign_in(base: &str, credential: Value) -> (StatusCode, HeaderMap, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}/console/session"))
        .json(&credential)
        .send()
        .await
        .unwrap();
    (
        resp.status(),
        resp.headers().clone(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

pub(crate) async fn open(base: &str, credential: Value) -> Session {
    let (status, headers, body) = sign_in(base, credential).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let set_cookie = headers["set-cookie"].to_str().unwrap();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    Session {
        cookie,
        csrf: body["csrfToken"].as_str().unwrap().to_owned(),
    }
}

/// POSTs one JSON-RPC message to `/console/ops` with the cookie and the given CSRF header.
pub(crate) async fn console_ops(
    base: &str,
    cookie: Option<&str>,
    csrf: Option<&str>,
    method: &str,
    params: Value,
) -> (StatusCode, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/console/ops"))
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
    if let Some(cookie) = cookie {
        req = req.header("cookie", cookie);
    }
    if let Some(csrf) = csrf {
        req = req.header("x-csrf-token", csrf);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

/// One `/ops` tool call with a bearer, as an operator agent makes it: the whole JSON-RPC reply.
async fn ops_call(base: &str, bearer: &str, name: &str, arguments: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{base}/ops"))
        .bearer_auth(bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub(crate) async fn tool(base: &str, session: &Session, name: &str, arguments: Value) -> Value {
    let (status, body) = console_ops(
        base,
        Some(&session.cookie),
        Some(&session.csrf),
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{name}: {body}");
    assert!(body["result"]["isError"].is_null(), "{name}: {body}");
    body["result"]["structuredContent"].clone()
}

async fn a_pair_code_opens_a_session_that_needs_its_csrf_token(app: TestApp) {
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    let wrong = if code == "000000" { "000001" } else { "000000" };
    let (status, headers, body) = sign_in(&app.base, json!({ "pairCode": wrong })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "invalid_pair_code");
    assert!(headers.get("set-cookie").is_none(), "a refused sign-in sets no cookie");
    let (status, _, body) = sign_in(&app.base, json!({ "key": "svc_user_not_a_key" })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "invalid_key");
    let (status, _, body) = sign_in(&app.base, json!({ "pairCode": code, "key": "x" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "invalid_request");

    let (status, headers, body) = sign_in(&app.base, json!({ "pairCode": code })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let set_cookie = headers["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/console", "Max-Age=43200"] {
        assert!(set_cookie.contains(attribute), "{attribute} missing from {set_cookie}");
    }
    assert!(
        !set_cookie.contains("Secure"),
        "plain http: no Secure attribute ({set_cookie})"
    );
    assert_eq!(
        body["principalId"], "owner",
        "the pair code acts for the local operator"
    );
    let session = Session {
        cookie: set_cookie.split(';').next().unwrap().to_owned(),
        csrf: body["csrfToken"].as_str().unwrap().to_owned(),
    };

    // An answer may hold a key just issued: kept by no cache on the way.
    let answered = reqwest::Client::new()
        .post(format!("{}/console/ops", app.base))
        .header("cookie", &session.cookie)
        .header("x-csrf-token", &session.csrf)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), StatusCode::OK);
    assert_eq!(answered.headers()["cache-control"], "no-store");

    // The same tools an operator agent gets on /ops.
    let (status, listed) = console_ops(
        &app.base,
        Some(&session.cookie),
        Some(&session.csrf),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, on_ops) = app.rpc("tools/list", json!({})).await;
    let ops_tools: Value = reqwest::Client::new()
        .post(format!("{}/ops", app.base))
        .bearer_auth(&app.bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed["result"], ops_tools["result"],
        "the console lists exactly the /ops tools"
    );
    assert_ne!(listed["result"], on_ops["result"], "and not the /mcp ones");

    // A state change without the session's token is refused, whatever else it carries.
    let create = json!({ "name": "svc_ops_create_app", "arguments": { "displayName": "From a forged page" } });
    for csrf in [None, Some("wrong-token"), Some("")] {
        let (status, body) = console_ops(&app.base, Some(&session.cookie), csrf, "tools/call", create.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "csrf {csrf:?}: {body}");
        assert_eq!(body["error"]["code"], "csrf_token_invalid");
    }
    let (status, body) = console_ops(&app.base, None, Some(&session.csrf), "tools/call", create.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "signed_out");
    let apps = tool(&app.base, &session, "svc_ops_list_apps", json!({})).await;
    assert!(
        !apps.to_string().contains("From a forged page"),
        "no refused request created anything: {apps}"
    );

    // With the token it is the operator's own change, seen on /ops by the operator's other key.
    let created = tool(
        &app.base,
        &session,
        "svc_ops_create_app",
        json!({ "displayName": "Console app" }),
    )
    .await;
    let seen = ops_call(&app.base, &app.bearer, "svc_ops_list_apps", json!({})).await;
    assert!(
        seen["result"]["structuredContent"]["apps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["appId"] == created["appId"]),
        "{seen}"
    );
    // The pair code minted a key named `console`, which the session is tied to.
    let keys = tool(&app.base, &session, "svc_ops_list_connector_keys", json!({})).await;
    assert!(
        keys["keys"].as_array().unwrap().iter().any(|k| k["name"] == "console"),
        "{keys}"
    );

    // Another replica on the database honours the session (a SQLite replica has its own file;
    // a sole server has none).
    let replica = match app.can_have_replicas() {
        false => None,
        true => Some(app.replica().await),
    };
    if let Some(replica) = &replica {
        let (status, body) = console_ops(
            &replica.base,
            Some(&session.cookie),
            Some(&session.csrf),
            "tools/list",
            json!({}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    // The page reads its CSRF token back after a reload; signing out needs it too.
    let status_of = |cookie: String| {
        let base = app.base.clone();
        async move {
            let resp = reqwest::Client::new()
                .get(format!("{base}/console/session"))
                .header("cookie", cookie)
                .send()
                .await
                .unwrap();
            (resp.status(), resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (status, body) = status_of(session.cookie.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["csrfToken"], session.csrf.as_str());
    let sign_out = |csrf: Option<&str>| {
        let mut req = reqwest::Client::new()
            .delete(format!("{}/console/session", app.base))
            .header("cookie", &session.cookie);
        if let Some(csrf) = csrf {
            req = req.header("x-csrf-token", csrf);
        }
        req.send()
    };
    assert_eq!(sign_out(None).await.unwrap().status(), StatusCode::FORBIDDEN);
    let out = sign_out(Some(&session.csrf)).await.unwrap();
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    assert!(out.headers()["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    let (status, body) = status_of(session.cookie.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "signed_out");
    for base in std::iter::once(&app.base).chain(replica.as_ref().map(|r| &r.base)) {
        let (status, _) = console_ops(
            base,
            Some(&session.cookie),
            Some(&session.csrf),
            "tools/list",
            json!({}),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "signed out on every replica");
    }
}

async fn revoking_the_key_ends_its_console_session(app: TestApp) {
    let issued = ops_call(
        &app.base,
        &app.bearer,
        "svc_ops_issue_connector_key",
        json!({ "name": "console test" }),
    )
    .await;
    let issued = issued["result"]["structuredContent"].clone();
    let key = issued["plaintextKey"].as_str().unwrap().to_owned();
    let session = open(&app.base, json!({ "key": key })).await;
    let listed = tool(&app.base, &session, "svc_ops_list_connector_keys", json!({})).await;
    assert!(!listed["keys"].as_array().unwrap().is_empty());

    let revoked = ops_call(
        &app.base,
        &app.bearer,
        "svc_ops_revoke_connector_key",
        json!({ "keyId": issued["id"] }),
    )
    .await;
    assert_eq!(revoked["result"]["structuredContent"]["status"], "revoked", "{revoked}");
    let (status, body) = console_ops(
        &app.base,
        Some(&session.cookie),
        Some(&session.csrf),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "signed_out");
    let (status, _, body) = sign_in(&app.base, json!({ "key": key })).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "invalid_key");
}

#[tokio::test]
async fn the_console_page_is_served_under_a_strict_policy_without_inline_script() {
    let app = TestApp::spawn("console_page", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let resp = reqwest::get(format!("{}/console", app.base)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let policy = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"),
        "{policy}"
    );
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = resp.text().await.unwrap();
    assert!(
        html.contains(r#"<script type="module" src="/console/app.js">"#),
        "{html}"
    );
    assert_eq!(html.matches("<script").count(), 1, "no inline script: {html}");
    for asset in ["app.js", "app.css"] {
        let resp = reqwest::get(format!("{}/console/{asset}", app.base)).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{asset}");
        assert!(!resp.text().await.unwrap().is_empty());
    }
    let (status, body) = console_ops(&app.base, None, None, "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}

/// Behind TLS (an https public URL) the cookie is `Secure`.
#[tokio::test]
async fn behind_tls_the_session_cookie_is_secure() {
    // The public URL names TLS at a proxy; the test reaches the server itself on its port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let app = TestApp::spawn_configured("console_secure", Backend::Sqlite, Auth::Strict, |s| {
        s.server.port = port;
        s.server.public_base_url = format!("https://localhost:{port}");
    })
    .await
    .unwrap();
    let direct = format!("http://127.0.0.1:{port}");
    let (status, headers, body) = sign_in(&direct, json!({ "key": app.bearer })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(headers["set-cookie"].to_str().unwrap().ends_with("; Secure"));
}

/// In development mode there is no pair code; any key signs in as `builder`.
#[tokio::test]
async fn in_development_mode_any_key_signs_in_as_builder() {
    let app = TestApp::spawn("console_dev", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let (status, _, body) = sign_in(&app.base, json!({ "pairCode": "123456" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "pair_code_unavailable");
    let (status, _, body) = sign_in(&app.base, json!({ "key": "anything" })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["principalId"], "builder");
}

/// Pair-code guesses at the console count in the one budget of `/_svc/pair`.
#[tokio::test]
async fn console_pair_code_guesses_share_the_pairing_budget() {
    let app = TestApp::spawn("console_pair_budget", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    for _ in 0..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
        let (status, _, _) = sign_in(&app.base, json!({ "pairCode": "999999x" })).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let right = app.pair_code.clone().unwrap();
    let (status, headers, body) = sign_in(&app.base, json!({ "pairCode": right })).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(headers.contains_key("retry-after"));
    assert_eq!(body["error"]["code"], "rate_limited");
    let paired = reqwest::Client::new()
        .post(format!("{}/_svc/pair", app.base))
        .json(&json!({ "pairCode": right }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        paired.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "one budget for both doors"
    );
}
