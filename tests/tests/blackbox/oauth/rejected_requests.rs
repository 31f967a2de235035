//! Authorization requests that fail a check after their client and redirect URI are verified:
//! answered with an error page (400) that names the error, the client and where the answer would
//! go, and links back to the client with `error`, `state` and `iss`. Never a redirect, on `GET`,
//! on the consent form's `POST` or in front of a consent URL (RFC 9700 section 4.11.2:
//! registration is open, so the redirect URI is a stranger's choice).

use reqwest::{StatusCode, Url};
use serde_json::json;
use svc_application::services::oauth::PARAMETER_MAX_BYTES;
use svc_tests::{Auth, Backend};

use crate::oauth::support::{Answer, OAuthApp, REDIRECT, STATE, with};

oauth_scenarios!(Auth::Strict =>
    each_failed_check_is_a_page_with_a_link_back_to_the_client,
    the_consent_form_answers_a_failed_check_with_the_same_page_and_approves_nothing,
    hostile_values_stay_text_on_the_page_and_exact_in_the_link,
);

/// What a request that failed a check must be answered with.
struct Refusal<'a> {
    error: &'a str,
    /// `None`: the request sent no state, so the link carries none.
    state: Option<&'a str>,
    /// Checked when given; otherwise only present.
    description: Option<&'a str>,
}

fn link_param(link: &Url, name: &str) -> Option<String> {
    let mut values = link
        .query_pairs()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned());
    let value = values.next();
    assert!(values.next().is_none(), "{name} appears once in {link}");
    value
}

fn assert_rejected_page(answer: &Answer, what: &str, issuer: &str, refusal: &Refusal) {
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{what}: {}", answer.body);
    assert!(answer.headers.get("location").is_none(), "{what}: never redirected");
    let header = |name: &str| answer.headers[name].to_str().unwrap().to_owned();
    assert!(header("content-type").starts_with("text/html"), "{what}");
    assert_eq!(header("cache-control"), "no-store", "{what}");
    assert_eq!(header("x-frame-options"), "DENY", "{what}");
    assert_eq!(header("referrer-policy"), "same-origin", "{what}");
    let csp = header("content-security-policy");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{what}: {csp}"
    );

    let body = &answer.body;
    assert!(
        body.contains(&format!("<code>{}</code>", refusal.error)),
        "{what}: names the error: {body}"
    );
    assert!(body.contains("Errors &amp; Co"), "{what}: names the client: {body}");
    assert!(
        body.contains("127.0.0.1:47613"),
        "{what}: names where the answer would go"
    );

    let link = answer
        .back_link()
        .unwrap_or_else(|| panic!("{what}: a link back: {body}"));
    let mut target = link.clone();
    target.set_query(None);
    assert_eq!(target.as_str(), REDIRECT, "{what}");
    assert_eq!(link_param(&link, "error").as_deref(), Some(refusal.error), "{what}");
    assert_eq!(link_param(&link, "state").as_deref(), refusal.state, "{what}");
    assert_eq!(link_param(&link, "iss").as_deref(), Some(issuer), "{what}");
    let description = link_param(&link, "error_description");
    match refusal.description {
        Some(expected) => assert_eq!(description.as_deref(), Some(expected), "{what}"),
        None => assert!(description.is_some_and(|d| !d.is_empty()), "{what}"),
    }
    assert!(link_param(&link, "code").is_none(), "{what}");
}

/// A request that fails one check, and how it must be refused.
struct FailingRequest {
    what: &'static str,
    params: Vec<(String, String)>,
    refusal: Refusal<'static>,
}

/// Every check `GET /oauth/authorize` makes once the client and its redirect URI are verified,
/// with the request that fails it.
fn failing_requests(app: &OAuthApp, request: &[(String, String)]) -> Vec<FailingRequest> {
    let issuer = app.issuer();
    let refusal = |error, description| Refusal {
        error,
        state: Some(STATE),
        description,
    };
    let long = "s".repeat(PARAMETER_MAX_BYTES + 1);
    let mut two_resources = with(request, "resource", Some(&format!("{issuer}/mcp")));
    two_resources.push(("resource".into(), issuer.to_owned()));
    let rows = vec![
        (
            "response_type token",
            with(request, "response_type", Some("token")),
            refusal("unsupported_response_type", Some("response_type must be code")),
        ),
        (
            "no response_type",
            with(request, "response_type", None),
            refusal("invalid_request", Some("response_type is required")),
        ),
        (
            "no state",
            with(request, "state", None),
            Refusal {
                error: "invalid_request",
                state: None,
                description: Some("state is required"),
            },
        ),
        (
            "long scope",
            with(request, "scope", Some(&long)),
            refusal("invalid_request", Some("scope is longer than 2048 bytes")),
        ),
        (
            "no code_challenge",
            with(request, "code_challenge", None),
            refusal("invalid_request", None),
        ),
        (
            "short code_challenge",
            with(request, "code_challenge", Some("abc")),
            refusal("invalid_request", None),
        ),
        (
            "plain PKCE",
            with(request, "code_challenge_method", Some("plain")),
            refusal("invalid_request", Some("code_challenge_method must be S256")),
        ),
        (
            "no PKCE method",
            with(request, "code_challenge_method", None),
            refusal("invalid_request", None),
        ),
        (
            "foreign resource",
            with(request, "resource", Some("https://evil.example/mcp")),
            refusal("invalid_target", None),
        ),
        (
            "unknown path",
            with(request, "resource", Some(&format!("{issuer}/other"))),
            refusal("invalid_target", None),
        ),
        (
            "unknown app",
            with(request, "resource", Some(&format!("{issuer}/apps/NoSuchApp0000000"))),
            refusal("invalid_target", None),
        ),
        (
            "two resources",
            two_resources,
            refusal("invalid_target", Some("only one resource may be requested")),
        ),
    ];
    rows.into_iter()
        .map(|(what, params, refusal)| FailingRequest { what, params, refusal })
        .collect()
}

async fn each_failed_check_is_a_page_with_a_link_back_to_the_client(app: OAuthApp) {
    let client_id = app.client("Errors & Co").await;
    let request = app.request(&client_id);
    for FailingRequest { what, params, refusal } in failing_requests(&app, &request) {
        assert_rejected_page(&app.authorize(&params).await, what, app.issuer(), &refusal);
    }
    // A long state is refused too, and echoed whole in the link.
    let long = "s".repeat(PARAMETER_MAX_BYTES + 1);
    let refusal = Refusal {
        error: "invalid_request",
        state: Some(&long),
        description: Some("state is longer than 2048 bytes"),
    };
    let answer = app.authorize(&with(&request, "state", Some(&long))).await;
    assert_rejected_page(&answer, "long state", app.issuer(), &refusal);
}

/// The consent form echoes a checked request, so a failing one was made elsewhere (a form on
/// another site posting here): it gets the page, whatever it asks for, and no key is minted.
async fn the_consent_form_answers_a_failed_check_with_the_same_page_and_approves_nothing(app: OAuthApp) {
    let client_id = app.client("Errors & Co").await;
    let request = app.request(&client_id);
    let bearer = app.app.bearer.clone();
    for FailingRequest { what, params, refusal } in failing_requests(&app, &request) {
        if what == "two resources" {
            // The form refuses any field sent twice before reading the request: the page
            // without a link, as for an unknown client.
            let answer = app.consent(&params, &[("api_key", &bearer)]).await;
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
            assert!(answer.headers.get("location").is_none() && answer.back_link().is_none());
            continue;
        }
        let approved = app.consent(&params, &[("api_key", &bearer)]).await;
        assert_rejected_page(&approved, &format!("{what}, allowed"), app.issuer(), &refusal);
        let declined = app.consent(&params, &[("action", "deny")]).await;
        assert_rejected_page(&declined, &format!("{what}, declined"), app.issuer(), &refusal);
    }
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    assert!(
        !keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == "Errors & Co"),
        "no key was minted: {keys}"
    );
    // A checked request is declined as before: back to the client at once.
    let declined = app.consent(&request, &[("action", "deny")]).await;
    assert_eq!(declined.status, StatusCode::FOUND, "{}", declined.body);
    assert_eq!(declined.param("error").as_deref(), Some("access_denied"));
}

async fn hostile_values_stay_text_on_the_page_and_exact_in_the_link(app: OAuthApp) {
    let client_id = app.client("Errors & Co").await;
    let state = r#""><script>alert('s')</script>&x=1"#;
    let params = with(
        &with(&app.request(&client_id), "state", Some(state)),
        "response_type",
        Some("token"),
    );
    let answer = app.authorize(&params).await;
    let refusal = Refusal {
        error: "unsupported_response_type",
        state: Some(state),
        description: None,
    };
    assert_rejected_page(&answer, "hostile state", app.issuer(), &refusal);
    assert!(!answer.body.contains("<script>"), "{}", answer.body);
}

/// With a consent URL, a request that fails a check never reaches it: the same page.
#[tokio::test]
async fn a_request_that_fails_a_check_is_not_sent_on_to_the_consent_url() {
    let app = OAuthApp::spawn("consent_url_refusal", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.consent_url = "https://consent.example.com/approve".into();
    })
    .await
    .unwrap();
    let client_id = app.client("Errors & Co").await;
    let request = app.request(&client_id);
    for FailingRequest { what, params, refusal } in failing_requests(&app, &request) {
        assert_rejected_page(&app.authorize(&params).await, what, app.issuer(), &refusal);
    }
    assert_eq!(
        app.authorize(&request).await.status,
        StatusCode::FOUND,
        "a checked request goes on"
    );
}
