//! The consent form answers only pages of this server's origin or of the configured consent URL's
//! (a browser's `Origin`, else its `Referer`). A form another site posts into a person's browser,
//! a valid "Deny" included, is refused with the error page (403) and nothing goes to the client.

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend};

use crate::oauth::support::{Answer, OAuthApp, REDIRECT};

oauth_scenarios!(Auth::Strict =>
    a_form_posted_from_another_site_is_refused_and_nothing_reaches_the_client,
);

const REFUSED: &str = "This form was not sent from this server&#39;s consent page, so nothing was done with it.";

fn assert_refused(answer: &Answer, what: &str) {
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{what}: {}", answer.body);
    assert!(answer.location.is_none(), "{what}: never redirected");
    assert!(answer.body.contains(REFUSED), "{what}: {}", answer.body);
    let header = |name: &str| answer.headers[name].to_str().unwrap().to_owned();
    assert!(header("content-type").starts_with("text/html"), "{what}");
    assert_eq!(header("cache-control"), "no-store", "{what}");
    assert_eq!(header("x-frame-options"), "DENY", "{what}");
}

fn assert_sent_to_client(answer: &Answer, what: &str, param: &str) {
    assert_eq!(answer.status, StatusCode::FOUND, "{what}: {}", answer.body);
    assert_eq!(answer.target(), REDIRECT, "{what}");
    assert!(
        answer.param(param).is_some(),
        "{what}: {param} in {:?}",
        answer.location
    );
}

async fn a_form_posted_from_another_site_is_refused_and_nothing_reaches_the_client(app: OAuthApp) {
    let client_id = app.client("Cross Site").await;
    let request = app.request(&client_id);
    let bearer = app.app.bearer.clone();
    // The same server under another name is another origin.
    let port = app.issuer().rsplit(':').next().unwrap().to_owned();
    let other_name = format!("http://localhost:{port}");
    let foreign: [(&str, &str); 5] = [
        ("origin", "https://evil.example"),
        ("origin", "null"),
        ("origin", &other_name),
        ("referer", "https://evil.example/page.html"),
        ("referer", "not a URL"),
    ];
    for header in foreign {
        let declined = app
            .consent_with_headers(&request, &[("action", "deny")], &[header])
            .await;
        assert_refused(&declined, &format!("deny from {header:?}"));
        let approved = app
            .consent_with_headers(&request, &[("api_key", &bearer)], &[header])
            .await;
        assert_refused(&approved, &format!("allow from {header:?}"));
    }
    // `Origin` decides over a `Referer` of this server.
    let referer = app.url("/oauth/authorize");
    let mixed = app
        .consent_with_headers(
            &request,
            &[("action", "deny")],
            &[("origin", "https://evil.example"), ("referer", &referer)],
        )
        .await;
    assert_refused(&mixed, "a foreign Origin with this server's Referer");
    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    assert!(
        !keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == "Cross Site"),
        "no key was minted: {keys}"
    );

    // The consent page's own form, as a browser posts it.
    let own = app.issuer().to_owned();
    let declined = app
        .consent_with_headers(&request, &[("action", "deny")], &[("origin", &own)])
        .await;
    assert_sent_to_client(&declined, "deny from this server", "error");
    assert_eq!(declined.param("error").as_deref(), Some("access_denied"));
    let approved = app
        .consent_with_headers(&request, &[("api_key", &bearer)], &[("origin", &own)])
        .await;
    assert_sent_to_client(&approved, "allow from this server", "code");
    let by_referer = app
        .consent_with_headers(&request, &[("api_key", &bearer)], &[("referer", &referer)])
        .await;
    assert_sent_to_client(&by_referer, "allow with this server's Referer", "code");
}

/// With `oauth.consent_url`, that page's origin may post the form too; other sites still may not.
#[tokio::test]
async fn the_configured_consent_pages_origin_may_post_the_form() {
    let app = OAuthApp::spawn("consent_url_origin", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.consent_url = "https://consent.example.com/approve?brand=1".into();
    })
    .await
    .unwrap();
    let client_id = app.client("Cross Site").await;
    let request = app.request(&client_id);
    let bearer = app.app.bearer.clone();
    let consent_page = [("origin", "https://consent.example.com")];
    let approved = app
        .consent_with_headers(&request, &[("api_key", &bearer)], &consent_page)
        .await;
    assert_sent_to_client(&approved, "allow from the consent page", "code");
    let declined = app
        .consent_with_headers(&request, &[("action", "deny")], &consent_page)
        .await;
    assert_sent_to_client(&declined, "deny from the consent page", "error");
    let own = app.issuer().to_owned();
    let declined = app
        .consent_with_headers(&request, &[("action", "deny")], &[("origin", &own)])
        .await;
    assert_sent_to_client(&declined, "deny from this server", "error");
    for origin in ["https://other.example.com", "https://consent.example.com:8443"] {
        let refused = app
            .consent_with_headers(&request, &[("action", "deny")], &[("origin", origin)])
            .await;
        assert_refused(&refused, origin);
    }
}
