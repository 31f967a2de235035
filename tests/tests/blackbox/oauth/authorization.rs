//! `GET /oauth/authorize` (an unknown client or redirect URI is never redirected to; the checks
//! after those are in `rejected_requests.rs`) and `POST /oauth/authorize` (the consent form with
//! the pair code or a key).

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend};

use crate::oauth::support::{OAuthApp, REDIRECT, STATE, with};

oauth_scenarios!(Auth::Strict =>
    unknown_clients_and_redirect_uris_are_never_redirected_to,
    consent_with_a_key_redirects_with_code_state_and_iss,
    consent_with_the_pair_code_yields_a_working_token,
    consent_needs_exactly_one_accepted_credential,
    declining_redirects_access_denied,
    a_key_that_may_not_act_for_the_app_is_denied_back_to_the_client,
    a_key_locked_to_the_default_app_mints_no_universal_key,
    a_per_app_resource_locks_the_key_to_the_app,
    a_key_minted_with_an_expiring_key_expires_with_it,
    a_per_app_resource_locks_a_pair_code_key_to_the_app,
);

fn assert_not_redirected(answer: &crate::oauth::support::Answer, what: &str) {
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{what}: {}", answer.body);
    assert!(answer.location.is_none(), "{what}: never redirected");
    assert!(
        answer.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{what}"
    );
    assert!(
        !answer.body.contains("47613"),
        "{what}: the page does not echo the redirect URI"
    );
}

async fn unknown_clients_and_redirect_uris_are_never_redirected_to(app: OAuthApp) {
    let client_id = app.client("Near misses").await;
    let request = app.request(&client_id);
    for (what, params) in [
        ("no client_id", with(&request, "client_id", None)),
        ("unknown client_id", with(&request, "client_id", Some("no-such-client"))),
        ("no redirect_uri", with(&request, "redirect_uri", None)),
        (
            "trailing slash",
            with(&request, "redirect_uri", Some("http://127.0.0.1:47613/callback/")),
        ),
        (
            "other port",
            with(&request, "redirect_uri", Some("http://127.0.0.1:47614/callback")),
        ),
        (
            "extra query",
            with(&request, "redirect_uri", Some("http://127.0.0.1:47613/callback?x=1")),
        ),
        (
            "another host",
            with(&request, "redirect_uri", Some("https://evil.example/callback")),
        ),
    ] {
        assert_not_redirected(&app.authorize(&params).await, what);
        // The consent POST runs the same checks.
        let posted = app.consent(&params, &[("api_key", &app.app.bearer)]).await;
        assert_not_redirected(&posted, what);
    }
    let mut duplicated = request.clone();
    duplicated.push(("redirect_uri".into(), "https://evil.example/cb".into()));
    assert_not_redirected(&app.authorize(&duplicated).await, "a duplicated parameter");
    let mut two_states = request.clone();
    two_states.push(("state".into(), "again".into()));
    assert_not_redirected(&app.authorize(&two_states).await, "two states");
    // Two resources are an error the client may hear (`rejected_requests.rs`), but only once its
    // redirect URI is verified.
    let mut two_resources = with(&request, "resource", Some(&format!("{}/mcp", app.issuer())));
    two_resources.push(("resource".into(), app.issuer().to_owned()));
    let unverified = with(&two_resources, "redirect_uri", Some("https://evil.example/cb"));
    assert_not_redirected(&app.authorize(&unverified).await, "two resources, foreign redirect");
}

async fn consent_with_a_key_redirects_with_code_state_and_iss(app: OAuthApp) {
    let client_id = app.client("<script>alert('x')</script> & Co").await;
    let request = with(
        &app.request(&client_id),
        "resource",
        Some(&format!("{}/mcp", app.issuer())),
    );
    let page = app.authorize(&request).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.headers["cache-control"], "no-store");
    assert_eq!(page.headers["x-frame-options"], "DENY");
    assert!(
        page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'; base-uri 'none'")
    );
    assert!(!page.body.contains("<script>"), "the client name is escaped");
    assert!(
        page.body
            .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; Co")
    );
    assert!(page.body.contains("127.0.0.1:47613"), "names where the code goes");
    assert!(page.body.contains("name=\"pair_code\"") && page.body.contains("name=\"api_key\""));
    assert!(page.body.contains("value=\"st&amp;te=1 ü\""), "state echoed escaped");

    let answer = app.consent(&request, &[("api_key", &app.app.bearer)]).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert_eq!(answer.target(), REDIRECT);
    assert!(answer.param("code").is_some_and(|c| c.len() >= 40));
    assert_eq!(answer.param("state").as_deref(), Some(STATE));
    let (_, _, metadata) = app.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(
        answer.param("iss").as_deref(),
        metadata["issuer"].as_str(),
        "iss is the metadata issuer"
    );
    let raw_location = answer.headers["location"].to_str().unwrap();
    let iss = url_encoded(app.issuer());
    assert!(raw_location.ends_with(&format!("&iss={iss}")), "{raw_location}");
}

fn url_encoded(text: &str) -> String {
    reqwest::Url::parse_with_params("x:", &[("v", text)])
        .unwrap()
        .query()
        .unwrap()
        .trim_start_matches("v=")
        .to_owned()
}

async fn consent_with_the_pair_code_yields_a_working_token(app: OAuthApp) {
    let client_id = app.client("Paired host").await;
    let request = app.request(&client_id);
    let pair_code = app.app.pair_code.clone().expect("strict mode prints a pair code");
    let answer = app
        .consent(&request, &[("pair_code", &pair_code), ("api_key", "")])
        .await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    let code = answer.param("code").unwrap();
    let (status, _, token) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    let access_token = token["access_token"].as_str().unwrap();
    assert!(access_token.starts_with("svc_user_"));
    assert_eq!(app.mcp_status(access_token).await, StatusCode::OK);
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let named: Vec<_> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"] == "Paired host")
        .collect();
    assert_eq!(named.len(), 1, "one row for the connected client: {keys}");
}

async fn consent_needs_exactly_one_accepted_credential(app: OAuthApp) {
    let client_id = app.client("Picky").await;
    let request = app.request(&client_id);
    let pair_code = app.app.pair_code.clone().unwrap();
    let wrong_code = if pair_code == "000000" { "000001" } else { "000000" };
    type Row<'a> = (&'a [(&'a str, &'a str)], StatusCode, &'a str);
    let rows: [Row; 5] = [
        (&[], StatusCode::BAD_REQUEST, "Enter the pair code or a key."),
        (
            &[("pair_code", ""), ("api_key", " ")],
            StatusCode::BAD_REQUEST,
            "Enter the pair code or a key.",
        ),
        (
            &[("pair_code", &pair_code), ("api_key", &app.app.bearer)],
            StatusCode::BAD_REQUEST,
            "not both",
        ),
        (
            &[("api_key", "svc_user_notakey")],
            StatusCode::UNAUTHORIZED,
            "was not accepted",
        ),
        (
            &[("pair_code", wrong_code)],
            StatusCode::UNAUTHORIZED,
            "was not accepted",
        ),
    ];
    for (fields, status, notice) in rows {
        let answer = app.consent(&request, fields).await;
        assert_eq!(answer.status, status, "{fields:?}");
        assert!(answer.location.is_none(), "{fields:?}");
        assert!(answer.body.contains(notice), "{fields:?}: {}", answer.body);
        assert!(answer.body.contains("name=\"client_id\""), "the form again: {fields:?}");
    }
}

async fn declining_redirects_access_denied(app: OAuthApp) {
    let client_id = app.client("Declined").await;
    let answer = app.consent(&app.request(&client_id), &[("action", "deny")]).await;
    assert_eq!(answer.status, StatusCode::FOUND);
    assert_eq!(answer.target(), REDIRECT);
    assert_eq!(answer.param("error").as_deref(), Some("access_denied"));
    assert_eq!(answer.param("state").as_deref(), Some(STATE));
    assert_eq!(answer.param("iss").as_deref(), Some(app.issuer()));
    assert!(answer.param("code").is_none());
}

/// The person chose a credential that may not grant the request: the client hears it at once,
/// as after declining (an answer to the person's own choice, not to a crafted link).
async fn a_key_that_may_not_act_for_the_app_is_denied_back_to_the_client(app: OAuthApp) {
    let default_app = app.default_app_id().await;
    let other_app = app.ops("svc_ops_create_app", json!({ "displayName": "Other" })).await["appId"]
        .as_str()
        .unwrap()
        .to_owned();
    let locked = app
        .ops(
            "svc_ops_issue_connector_key",
            json!({ "name": "locked", "appId": other_app }),
        )
        .await;
    let client_id = app.client("Locked out").await;
    let resource = format!("{}/apps/{default_app}", app.issuer());
    let request = with(&app.request(&client_id), "resource", Some(&resource));
    let answer = app
        .consent(&request, &[("api_key", locked["plaintextKey"].as_str().unwrap())])
        .await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert_eq!(answer.target(), REDIRECT);
    assert_eq!(answer.param("error").as_deref(), Some("access_denied"));
    assert_eq!(answer.param("state").as_deref(), Some(STATE));
    assert_eq!(answer.param("iss").as_deref(), Some(app.issuer()));
    assert!(answer.param("code").is_none());
}

/// A key locked to its owner's default app is as narrow as one locked to another app: consent
/// without a resource mints a key locked to that app, never a universal one.
async fn a_key_locked_to_the_default_app_mints_no_universal_key(app: OAuthApp) {
    let default_app = app.default_app_id().await;
    let locked = app
        .ops(
            "svc_ops_issue_connector_key",
            json!({ "name": "locked to the default app", "appId": default_app }),
        )
        .await;
    let client_id = app.client("Narrow host").await;
    let answer = app
        .consent(
            &app.request(&client_id),
            &[("api_key", locked["plaintextKey"].as_str().unwrap())],
        )
        .await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert!(answer.param("code").is_some(), "{:?}", answer.location);
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let minted = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "Narrow host")
        .unwrap();
    assert_eq!(minted["appId"], default_app.as_str(), "{minted}");
}

/// Both per-app forms: the app (`/apps/<appId>`) and its endpoint (`/apps/<appId>/mcp`, the
/// `resource` its protected-resource metadata names).
async fn a_per_app_resource_locks_the_key_to_the_app(app: OAuthApp) {
    let app_id = app.default_app_id().await;
    for (suffix, client_name) in [("", "Per-app host"), ("/mcp", "Per-app endpoint host")] {
        let resource = format!("{}/apps/{app_id}{suffix}", app.issuer());
        let client_id = app.client(client_name).await;
        let request = with(&app.request(&client_id), "resource", Some(&resource));
        let page = app.authorize(&request).await;
        assert_eq!(page.status, StatusCode::OK, "{resource}: {}", page.body);
        assert!(page.body.contains(&app_id), "the page names the app");
        let code = app.code_for(&request).await;
        let form = with(&app.token_form(&client_id, &code), "resource", Some(&resource));
        let (status, _, token) = app.token(&form).await;
        assert_eq!(status, StatusCode::OK, "{resource}: {token}");
        assert_eq!(
            app.mcp_status(token["access_token"].as_str().unwrap()).await,
            StatusCode::OK
        );
        let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
        let key = keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == client_name)
            .unwrap();
        assert_eq!(key["appId"], app_id.as_str(), "{key}");
    }
}

#[tokio::test]
async fn a_consent_url_receives_every_parameter_and_mcp_origin() {
    let app = OAuthApp::spawn("consent_url", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.consent_url = "https://consent.example.com/approve?brand=1".into();
    })
    .await
    .unwrap();
    let client_id = app.client("Hosted consent").await;
    let request = app.request(&client_id);
    let answer = app.authorize(&request).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert_eq!(answer.target(), "https://consent.example.com/approve");
    assert_eq!(answer.param("brand").as_deref(), Some("1"));
    for (name, value) in &request {
        assert_eq!(answer.param(name).as_deref(), Some(value.as_str()), "{name}");
    }
    assert_eq!(answer.param("mcp_origin").as_deref(), Some(app.issuer()));
    // An `mcp_origin` in the request is the sender's, not the server's: it is not passed on.
    let forged = app
        .authorize(&with(&request, "mcp_origin", Some("https://evil.example")))
        .await;
    assert_eq!(forged.status, StatusCode::FOUND, "{}", forged.body);
    let origins: Vec<String> = forged
        .location
        .as_ref()
        .unwrap()
        .query_pairs()
        .filter(|(name, _)| name == "mcp_origin")
        .map(|(_, value)| value.into_owned())
        .collect();
    assert_eq!(origins, [app.issuer()], "only the server's origin");
    // A request that fails a check never gets there: `rejected_requests.rs`.
}

#[tokio::test]
async fn pair_code_guesses_on_the_consent_form_are_rate_limited() {
    let app = OAuthApp::spawn("consent_rate_limit", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let client_id = app.client("Guesser").await;
    let request = app.request(&client_id);
    for n in 0..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
        let answer = app.consent(&request, &[("pair_code", "99999x")]).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "guess {n}");
    }
    let pair_code = app.app.pair_code.clone().unwrap();
    let answer = app.consent(&request, &[("pair_code", &pair_code)]).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.headers.contains_key("retry-after"));
    assert!(answer.body.contains("rate_limited"));
    // Keys are not guessable and stay usable.
    let answer = app.consent(&request, &[("api_key", &app.app.bearer)]).await;
    assert_eq!(answer.status, StatusCode::FOUND);
}

/// `POST /_svc/pair` and the consent form accept the same pair code: one budget of guesses per
/// address covers both doors, so a second door does not double the guesses.
#[tokio::test]
async fn pair_code_guesses_share_one_budget_across_the_pair_route_and_the_consent_form() {
    let app = OAuthApp::spawn("pair_budget", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let client_id = app.client("Two doors").await;
    let request = app.request(&client_id);
    let pair = || async {
        app.http
            .post(app.url("/_svc/pair"))
            .json(&serde_json::json!({ "pairCode": "99999x" }))
            .send()
            .await
            .unwrap()
            .status()
    };
    let half = svc_http::PAIR_ATTEMPTS_PER_MINUTE / 2;
    for n in 0..half {
        assert_eq!(pair().await, StatusCode::UNAUTHORIZED, "pair route guess {n}");
    }
    for n in half..svc_http::PAIR_ATTEMPTS_PER_MINUTE {
        let answer = app.consent(&request, &[("pair_code", "99999x")]).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "consent guess {n}");
    }
    let answer = app.consent(&request, &[("pair_code", "99999x")]).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS, "the budget is spent");
    assert_eq!(pair().await, StatusCode::TOO_MANY_REQUESTS, "on both doors");
}

/// A pair-code attempt on the consent form that cannot be counted (the database lost its table
/// of windows) is refused with the form's error page, as its other busy answers are: a browser is
/// on the other end, so HTML under the consent page's headers, 503, no `Retry-After` (none is
/// known), and no code (before, the `/_svc/pair` route's JSON `internal_error`).
#[tokio::test]
async fn a_pair_code_attempt_that_cannot_be_counted_is_the_forms_503_page() {
    use sea_orm::{ConnectionTrait, Database};
    let app = OAuthApp::spawn("consent_uncounted", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let client_id = app.client("Uncounted").await;
    let request = app.request(&client_id);
    let db = Database::connect(app.app.settings.database_url())
        .await
        .expect("connect");
    db.execute_unprepared("DROP TABLE rate_windows").await.expect("drop");
    let pair_code = app.app.pair_code.clone().expect("strict mode prints a pair code");
    let answer = app.consent(&request, &[("pair_code", &pair_code)]).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{}", answer.body);
    assert_eq!(answer.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(answer.headers["cache-control"], "no-store");
    assert_eq!(answer.headers["x-frame-options"], "DENY");
    assert!(!answer.headers.contains_key("retry-after"), "{:?}", answer.headers);
    assert!(answer.location.is_none(), "no code: {:?}", answer.location);
    assert!(
        answer.body.contains(
            "<p>The pair code could not be counted against this address&#39;s limit right now. \
             Try again in a moment.</p>"
        ),
        "{}",
        answer.body
    );
    // A key needs no count: it still approves.
    let answer = app.consent(&request, &[("api_key", &app.app.bearer)]).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
}

#[tokio::test]
async fn in_dev_mode_the_form_asks_for_a_key_only() {
    let app = OAuthApp::spawn("consent_dev", Backend::Sqlite, Auth::DevAllowAll, |_| {})
        .await
        .unwrap();
    let client_id = app.client("Dev host").await;
    let request = app.request(&client_id);
    let page = app.authorize(&request).await;
    assert!(!page.body.contains("name=\"pair_code\""));
    let answer = app.consent(&request, &[("pair_code", "123456")]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.body.contains("use a key"));
    let code = app.code_for(&request).await;
    let (status, _, token) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
}

/// Consent never widens the credential typed into the form: a key that expires in an hour mints
/// a client key that expires with it, not one that lives for ever.
async fn a_key_minted_with_an_expiring_key_expires_with_it(app: OAuthApp) {
    let expires_at =
        (chrono::Utc::now() + chrono::TimeDelta::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let typed = app
        .ops(
            "svc_ops_issue_connector_key",
            json!({ "name": "short-lived", "expiresAt": expires_at }),
        )
        .await;
    let typed_key = typed["plaintextKey"].as_str().unwrap();
    let client_id = app.client("Expiring host").await;
    let request = app.request(&client_id);
    let answer = app.consent(&request, &[("api_key", typed_key)]).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let minted = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "Expiring host")
        .expect("the client's key");
    assert_eq!(minted["expiresAt"], typed["expiresAt"], "{minted}");
}

/// The pair code stands for the local operator, but a client that asked for one app's resource
/// gets a key for that app alone, as with a typed key.
async fn a_per_app_resource_locks_a_pair_code_key_to_the_app(app: OAuthApp) {
    let app_id = app.default_app_id().await;
    let resource = format!("{}/apps/{app_id}", app.issuer());
    let client_id = app.client("Per-app paired host").await;
    let request = with(&app.request(&client_id), "resource", Some(&resource));
    let pair_code = app.app.pair_code.clone().expect("strict mode prints a pair code");
    let answer = app.consent(&request, &[("pair_code", &pair_code)]).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    assert!(answer.param("code").is_some(), "{:?}", answer.location);
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let key = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "Per-app paired host")
        .expect("the client's key");
    assert_eq!(key["appId"], app_id.as_str(), "{key}");
}
