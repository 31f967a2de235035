//! Discovery: the 401 challenge, protected-resource metadata at every path, the authorization-
//! server metadata with Document 2's fixed values and one issuer string; and OAuth off.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

use crate::oauth::support::OAuthApp;

oauth_scenarios!(Auth::Strict => app_scoped_metadata_exists_for_known_apps_only);

#[tokio::test]
async fn discovery_starts_from_the_mcp_401_and_names_one_issuer() {
    let app = OAuthApp::spawn("discovery", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let issuer = app.issuer().to_owned();
    assert!(!issuer.ends_with('/'), "{issuer}");

    let resp = app.http.get(app.url("/mcp")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let metadata_url = format!("{issuer}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        challenge,
        format!(r#"Bearer realm="mcp", resource_metadata="{metadata_url}""#)
    );
    let resp = app
        .app
        .post_raw(None, json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .await;
    assert_eq!(
        resp.1["www-authenticate"].to_str().unwrap(),
        challenge,
        "POST gets the same challenge"
    );

    let expected_resource = json!({
        "resource": format!("{issuer}/mcp"),
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "resource_documentation": format!("{issuer}/oauth/docs"),
    });
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let (status, _, body) = app.get_json(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(body, expected_resource, "{path}");
    }

    let (status, _, metadata) = app.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        metadata,
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/oauth/authorize"),
            "token_endpoint": format!("{issuer}/oauth/token"),
            "registration_endpoint": format!("{issuer}/oauth/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["mcp"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        })
    );
    let resp = app.http.get(app.url("/oauth/docs")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // The consent pages' headers: not framed, not sniffed, a strict policy.
    assert_eq!(resp.headers()["x-frame-options"], "DENY");
    let policy = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(
        policy.contains("frame-ancestors 'none'") && policy.contains("base-uri 'none'"),
        "{policy}"
    );
    assert!(resp.text().await.unwrap().contains(&format!("{issuer}/mcp")));
}

async fn app_scoped_metadata_exists_for_known_apps_only(app: OAuthApp) {
    let app_id = app.default_app_id().await;
    let (status, _, body) = app
        .get_json(&format!("/.well-known/oauth-protected-resource/apps/{app_id}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["resource"], format!("{}/apps/{app_id}", app.issuer()));
    assert_eq!(body["authorization_servers"], json!([app.issuer()]));
    // RFC 9728 section 3.3: the document at the path the per-app challenge names describes
    // exactly the resource the client requested, `/apps/<appId>/mcp`.
    let endpoint = format!("{}/apps/{app_id}/mcp", app.issuer());
    let resp = app.http.post(&endpoint).json(&json!({})).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let metadata_path = format!("/.well-known/oauth-protected-resource/apps/{app_id}/mcp");
    assert!(
        challenge.ends_with(&format!(r#"resource_metadata="{}{metadata_path}""#, app.issuer())),
        "{challenge}"
    );
    let (status, _, body) = app.get_json(&metadata_path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["resource"], endpoint);
    for unknown in ["NoSuchApp0000000", "not-an-id"] {
        let (status, _, _) = app
            .get_json(&format!("/.well-known/oauth-protected-resource/apps/{unknown}"))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    }
}

/// `/ops` takes the same keys as `/mcp`, so both of its challenges (GET and POST) name the
/// universal resource's metadata, as `/mcp`'s do.
#[tokio::test]
async fn both_ops_challenges_name_the_ops_resource_metadata() {
    let app = OAuthApp::spawn("ops_challenges", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let expected = format!(
        r#"Bearer realm="mcp", resource_metadata="{}/.well-known/oauth-protected-resource/ops""#,
        app.issuer()
    );
    // RFC 9728 section 3.3: the document names the resource the client asked for.
    let (status, _, metadata) = app.get_json("/.well-known/oauth-protected-resource/ops").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(metadata["resource"], format!("{}/ops", app.issuer()));
    assert_eq!(metadata["authorization_servers"], json!([app.issuer()]));
    let get = app.http.get(app.url("/ops")).send().await.unwrap();
    assert_eq!(get.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(get.headers()["www-authenticate"], expected.as_str(), "GET /ops");
    let post = app
        .http
        .post(app.url("/ops"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(post.headers()["www-authenticate"], expected.as_str(), "POST /ops");
}

#[tokio::test]
async fn the_issuer_flag_sets_every_url() {
    let app = OAuthApp::spawn("issuer_flag", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.issuer = "HTTPS://MCP.Example.com/".into();
    })
    .await
    .unwrap();
    let (_, _, metadata) = app.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(metadata["issuer"], "https://mcp.example.com");
    assert_eq!(metadata["token_endpoint"], "https://mcp.example.com/oauth/token");
    let (_, _, resource) = app.get_json("/.well-known/oauth-protected-resource").await;
    assert_eq!(resource["resource"], "https://mcp.example.com/mcp");
    assert_eq!(resource["authorization_servers"], json!(["https://mcp.example.com"]));
}

/// The one-line settings error a server with OAuth on and `configure`d settings stops with.
async fn start_refused(data_dir: &str, configure: impl FnOnce(&mut svc::Settings)) -> String {
    let mut settings = svc::Settings::load(None).unwrap();
    settings.server.port = 0;
    settings.server.data_dir = svc_tests::temp_dir(data_dir);
    settings.oauth.enabled = true;
    configure(&mut settings);
    let error = svc::Application::build(&settings).await.err().expect("refused");
    let _ = std::fs::remove_dir_all(&settings.server.data_dir);
    let line = error.to_string();
    assert!(!line.contains('\n'), "one line: {line}");
    line
}

#[tokio::test]
async fn an_insecure_issuer_refuses_to_start() {
    let error = start_refused("svc-oauth-issuer", |s| s.oauth.issuer = "http://mcp.example.com".into()).await;
    assert!(error.contains("oauth.issuer"), "{error}");
}

/// Discovery is served at the root form only (no RFC 8414 path-inserted metadata URL), so an
/// issuer with a path would advertise endpoints no client finds: refused when written.
#[tokio::test]
async fn an_issuer_with_a_path_refuses_to_start() {
    let error = start_refused("svc-oauth-issuer-path", |s| {
        s.oauth.issuer = "https://mcp.example.com/base".into();
    })
    .await;
    assert!(error.contains("oauth.issuer"), "{error}");
    assert!(error.contains("path"), "{error}");
}

/// Document 2: the authorization code lives 5 minutes; a longer lifetime is refused, a shorter
/// one (tests use 1 second) is not.
#[tokio::test]
async fn a_code_lifetime_over_five_minutes_refuses_to_start() {
    let error = start_refused("svc-oauth-code-lifetime", |s| s.oauth.code_lifetime_seconds = 301).await;
    assert!(error.contains("oauth.code_lifetime_seconds"), "{error}");
    assert!(error.contains("300"), "{error}");
}

#[tokio::test]
async fn with_oauth_off_every_oauth_path_is_404() {
    let app = TestApp::spawn("oauth_off", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/apps/Ab12Cd34Ef56Gh78",
        "/.well-known/oauth-authorization-server",
        "/oauth/authorize?response_type=code",
        "/oauth/docs",
    ] {
        let status = client.get(format!("{}{path}", app.base)).send().await.unwrap().status();
        assert_eq!(status, StatusCode::NOT_FOUND, "GET {path}");
    }
    for path in ["/oauth/register", "/oauth/authorize", "/oauth/token"] {
        let status = client
            .post(format!("{}{path}", app.base))
            .json(&json!({ "redirect_uris": ["https://c.example.com/cb"] }))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::NOT_FOUND, "POST {path}");
    }
    // A method no operation has is 404 too, not 405: off is as if never mounted.
    let other_methods = [
        (reqwest::Method::GET, "/oauth/token"),
        (reqwest::Method::GET, "/oauth/register"),
        (reqwest::Method::PUT, "/oauth/authorize"),
        (reqwest::Method::POST, "/.well-known/oauth-authorization-server"),
        (reqwest::Method::DELETE, "/.well-known/oauth-protected-resource"),
    ];
    for (method, path) in other_methods {
        let status = client
            .request(method.clone(), format!("{}{path}", app.base))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
    }
    let (status, headers, _) = app.post_raw(None, Value::Null.to_string()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        headers["www-authenticate"], r#"Bearer realm="mcp""#,
        "bearer-only challenge"
    );
}

/// `/openapi.json`: the document poem-openapi generates from the routes, served with OAuth on or
/// off (it is static), naming every OAuth, discovery and pairing path with its answers.
#[tokio::test]
async fn the_openapi_document_names_every_route() {
    let app = TestApp::spawn("openapi_document", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let resp = reqwest::get(format!("{}/openapi.json", app.base)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let document: Value = resp.json().await.unwrap();
    assert!(document["openapi"].as_str().unwrap().starts_with("3."), "{document}");
    let operations = [
        ("/.well-known/oauth-authorization-server", "get", "200"),
        ("/.well-known/oauth-protected-resource", "get", "200"),
        ("/.well-known/oauth-protected-resource/mcp", "get", "200"),
        ("/.well-known/oauth-protected-resource/apps/{app_id}", "get", "200"),
        ("/oauth/docs", "get", "200"),
        ("/oauth/register", "post", "201"),
        ("/oauth/authorize", "get", "302"),
        ("/oauth/authorize", "post", "302"),
        ("/oauth/token", "post", "200"),
        ("/_svc/pair", "post", "201"),
    ];
    for (path, method, success) in operations {
        let operation = &document["paths"][path][method];
        assert!(
            operation["responses"][success].is_object(),
            "{method} {path}: {operation}"
        );
        assert!(
            operation["responses"]["404"].is_object(),
            "{method} {path} documents its 404"
        );
    }
    let pair = &document["paths"]["/_svc/pair"]["post"]["responses"]["422"];
    assert!(
        pair["content"]["application/json; charset=utf-8"].is_object(),
        "a bad clientName is documented: {pair}"
    );
    let token = &document["paths"]["/oauth/token"]["post"];
    assert!(
        token["requestBody"]["content"]["application/x-www-form-urlencoded"].is_object(),
        "{token}"
    );
    assert_eq!(
        document,
        serde_json::from_str::<Value>(svc_http::openapi_document()).unwrap()
    );
}

/// The headers `/openapi.json` lists for one answer of `/oauth/authorize`, lower-cased.
fn documented_headers(document: &Value, method: &str, status: &str) -> std::collections::BTreeSet<String> {
    let answer = &document["paths"]["/oauth/authorize"][method]["responses"][status];
    answer["headers"]
        .as_object()
        .unwrap_or_else(|| panic!("{method} {status} lists headers: {answer}"))
        .keys()
        .map(|name| name.to_ascii_lowercase())
        .collect()
}

/// Every HTML page `/oauth/authorize` answers is documented with the headers the consent page's
/// 200 lists (its CSP, framing, caching and referrer policy), the refusals included; and the
/// server's real refusal carries each of them.
#[tokio::test]
async fn the_openapi_document_lists_the_page_headers_on_every_authorize_page() {
    let app = OAuthApp::spawn("openapi_page_headers", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let (status, _, document) = app.get_json("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let consent = documented_headers(&document, "get", "200");
    for name in [
        "cache-control",
        "x-frame-options",
        "content-security-policy",
        "referrer-policy",
    ] {
        assert!(consent.contains(name), "{name} in {consent:?}");
    }
    let pages = [
        ("get", "400"),
        ("get", "500"),
        ("get", "503"),
        ("post", "400"),
        ("post", "401"),
        ("post", "403"),
        ("post", "413"),
        ("post", "500"),
        ("post", "502"),
        ("post", "503"),
    ];
    for (method, status) in pages {
        let mut expected = consent.clone();
        // The consent answer's 503 is also the hashing queue's busy page, which says when to retry.
        if (method, status) == ("post", "503") {
            expected.insert("retry-after".to_owned());
        }
        assert_eq!(
            documented_headers(&document, method, status),
            expected,
            "{method} {status}"
        );
    }
    let refused = app.authorize(&app.request("no-such-client")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    for name in documented_headers(&document, "get", "400") {
        assert!(refused.headers.contains_key(name.as_str()), "{name} on the real 400");
    }
}
