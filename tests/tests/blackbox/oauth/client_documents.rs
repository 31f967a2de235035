//! Client ID Metadata Documents: a client whose `client_id` is the URL of its metadata document,
//! served here on loopback. Dev mode fetches loopback `http` documents; strict mode fetches only
//! public `https` hosts and never contacts a private one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use poem::endpoint::{make, make_sync};
use poem::http::StatusCode as PoemStatus;
use poem::listener::TcpAcceptor;
use poem::{Endpoint, EndpointExt, Response, Route, Server};
use reqwest::StatusCode;
use serde_json::json;
use svc_application::services::oauth::{
    CLIENT_DOCUMENT_FETCHES_AT_ONCE, CLIENT_DOCUMENT_FETCHES_PER_HOST, ClientDocumentRefused,
};
use svc_tests::{Auth, Backend};

use crate::oauth::support::{OAuthApp, REDIRECT, with};

oauth_scenarios!(Auth::DevAllowAll =>
    a_client_named_by_its_document_completes_the_flow,
    a_nameless_client_with_a_long_url_gets_a_shortened_key_name,
);

/// A path that makes the document's URL longer than a key name may be (120 characters).
fn long_path() -> String {
    format!("/clients/{}.json", "a".repeat(120))
}

/// A loopback site serving metadata documents; counts the requests it answers.
struct DocumentSite {
    origin: String,
    hits: Arc<AtomicUsize>,
}

impl DocumentSite {
    async fn start() -> Self {
        Self::start_on("127.0.0.1").await
    }

    /// The site on another loopback address: another host to the server.
    async fn start_on(address: &str) -> Self {
        let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let document = |path: &str, client_id: String| {
            let body = json!({
                "client_id": client_id,
                "client_name": "Doc Client",
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": "none",
                "padding": if path == "/oversize.json" { "x".repeat(6 * 1024) } else { String::new() },
            })
            .to_string();
            make_sync(move |_| Response::builder().content_type("application/json").body(body.clone()))
        };
        let nameless = {
            let body = json!({
                "client_id": format!("{origin}{}", long_path()),
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": "none",
            })
            .to_string();
            make_sync(move |_| Response::builder().content_type("application/json").body(body.clone()))
        };
        let counted = hits.clone();
        let app = Route::new()
            .at(long_path(), nameless)
            .at("/good.json", document("/good.json", format!("{origin}/good.json")))
            .at(
                "/mismatch.json",
                document("/mismatch.json", "https://someone-else.example/client.json".into()),
            )
            .at(
                "/oversize.json",
                document("/oversize.json", format!("{origin}/oversize.json")),
            )
            .at(
                "/redirect.json",
                make_sync({
                    let target = format!("{origin}/good.json");
                    move |_| {
                        Response::builder()
                            .status(PoemStatus::FOUND)
                            .header("location", target.clone())
                            .finish()
                    }
                }),
            )
            .around(move |endpoint, request| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    endpoint.call(request).await
                }
            });
        let acceptor = TcpAcceptor::from_tokio(listener).unwrap();
        tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
        Self { origin, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Authorize, consent and token with a document's URL as `client_id`; the document is read once.
async fn a_client_named_by_its_document_completes_the_flow(app: OAuthApp) {
    let site = DocumentSite::start().await;
    let client_id = site.url("/good.json");
    let params = app.request(&client_id);

    let shown = app.authorize(&params).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(shown.body.contains("Doc Client"), "{}", shown.body);
    assert!(
        shown.body.contains("described by a document on <code>127.0.0.1</code>"),
        "{}",
        shown.body
    );

    let code = app.code_for(&params).await;
    let (status, _, body) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["access_token"].as_str().expect("access_token");
    assert_eq!(app.mcp_status(token).await, StatusCode::OK);
    assert_eq!(site.hits(), 1, "authorize, consent and token read one cached document");

    let elsewhere = with(&params, "redirect_uri", Some("http://127.0.0.1:47613/other"));
    let refused = app.authorize(&elsewhere).await;
    assert_eq!(
        refused.status,
        StatusCode::BAD_REQUEST,
        "the document's redirect_uris bind"
    );
    assert!(refused.location.is_none());
}

/// Without a `client_name` the key is named after the `client_id`; a URL longer than a key name
/// is shortened to fit rather than failing the consent.
async fn a_nameless_client_with_a_long_url_gets_a_shortened_key_name(app: OAuthApp) {
    let site = DocumentSite::start().await;
    let client_id = site.url(&long_path());
    assert!(client_id.chars().count() > 120, "{client_id}");
    let params = app.request(&client_id);
    let code = app.code_for(&params).await;
    let (status, _, body) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["access_token"].as_str().expect("access_token");
    assert_eq!(app.mcp_status(token).await, StatusCode::OK);

    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let prefix: String = client_id.chars().take(119).collect();
    let names: Vec<&str> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .filter(|name| name.starts_with(&prefix))
        .collect();
    assert_eq!(names, vec![format!("{prefix}…")], "{keys}");
}

/// The page shown for a refused document: 400, its reason, no redirect to the client.
async fn refused_with(app: &OAuthApp, client_id: &str, reason: &str) {
    let answer = app.authorize(&app.request(client_id)).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{client_id}: {}", answer.body);
    assert!(answer.location.is_none(), "{client_id}: never redirected");
    assert!(
        answer.body.contains(reason),
        "{client_id}: wanted {reason:?} in {}",
        answer.body
    );
}

#[tokio::test]
async fn documents_that_break_the_rules_are_refused() {
    let app = OAuthApp::spawn("cimd_refused", Backend::Sqlite, Auth::DevAllowAll, |_| {})
        .await
        .unwrap();
    let site = DocumentSite::start().await;
    let cases = [
        ("/mismatch.json", "client_id is not the URL it was fetched from"),
        ("/oversize.json", "it is larger than 5120 bytes"),
        (
            "/redirect.json",
            "it answered with a redirect, and redirects are not followed",
        ),
        ("/missing.json", "it answered HTTP 404"),
    ];
    for (path, reason) in cases {
        refused_with(&app, &site.url(path), reason).await;
    }

    // The token endpoint applies the same check: invalid_client.
    let (status, _, body) = app.token(&app.token_form(&site.url("/mismatch.json"), "x")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_client");
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("client_id is not the URL"),
        "{body}"
    );

    // Not cached when refused: every attempt fetches again.
    let before = site.hits();
    refused_with(&app, &site.url("/mismatch.json"), "client_id is not the URL").await;
    assert_eq!(site.hits(), before + 1);
}

#[tokio::test]
async fn outside_dev_mode_private_targets_are_never_contacted() {
    let app = OAuthApp::spawn("cimd_strict", Backend::Sqlite, Auth::Strict, |_| {})
        .await
        .unwrap();
    let site = DocumentSite::start().await;
    let port = site.origin.rsplit(':').next().unwrap().to_owned();
    refused_with(&app, &site.url("/good.json"), "the client_id URL must use https").await;
    for url in [
        format!("https://127.0.0.1:{port}/good.json"),
        format!("https://[::1]:{port}/good.json"),
        format!("https://localhost:{port}/good.json"),
    ] {
        refused_with(
            &app,
            &url,
            "could not be fetched: its host is a private, loopback or link-local address",
        )
        .await;
    }
    refused_with(&app, "https://app.example.com/", "the client_id URL must have a path").await;
    assert_eq!(site.hits(), 0, "the site was never contacted");
}

/// A host that takes every request and never answers; counts the requests it holds.
struct StalledSite {
    origin: String,
    held: Arc<AtomicUsize>,
}

impl StalledSite {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let held = Arc::new(AtomicUsize::new(0));
        let counted = held.clone();
        let app = Route::new().at(
            "/*path",
            make(move |_| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Response>().await
                }
            }),
        );
        let acceptor = TcpAcceptor::from_tokio(listener).unwrap();
        tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
        Self { origin, held }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }
}

/// A host that never answers holds only its share of the fetches: while it stalls, the rest of
/// its clients are refused at once (503 at authorize and at token) and a client on another host
/// is still fetched and shown the consent form.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stalled_host_holds_only_its_share_and_other_hosts_clients_are_fetched() {
    let app = Arc::new(
        OAuthApp::spawn("cimd_stalled_host", Backend::Sqlite, Auth::DevAllowAll, |_| {})
            .await
            .unwrap(),
    );
    let stalled = StalledSite::start().await;
    // As many clients on the stalled host as the server fetches at once.
    let mut attempts: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_AT_ONCE)
        .map(|i| {
            let app = app.clone();
            let params = app.request(&stalled.url(&format!("/client{i}.json")));
            tokio::spawn(async move { app.authorize(&params).await })
        })
        .collect();
    // Bounded, and well inside the 5-second fetch timeout that would free the held slots.
    let mut waited = 0;
    while stalled.held.load(Ordering::SeqCst) + attempts.iter().filter(|a| a.is_finished()).count()
        < CLIENT_DOCUMENT_FETCHES_AT_ONCE
    {
        assert!(waited < 300, "every attempt is held by the host or answered");
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    let (answered, held): (Vec<_>, Vec<_>) = attempts.drain(..).partition(|a| a.is_finished());
    assert_eq!(
        stalled.held.load(Ordering::SeqCst),
        CLIENT_DOCUMENT_FETCHES_PER_HOST,
        "the stalled host holds its share of fetches, no more"
    );
    assert_eq!(held.len(), CLIENT_DOCUMENT_FETCHES_PER_HOST);
    let host_busy = ClientDocumentRefused::HostBusy.to_string();
    for attempt in answered {
        let answer = attempt.await.unwrap();
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{}", answer.body);
        assert!(answer.location.is_none());
        assert!(answer.body.contains(&host_busy), "{}", answer.body);
    }
    let (status, _, body) = app
        .token(&app.token_form(&stalled.url("/token-client.json"), "x"))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "temporarily_unavailable");
    assert_eq!(body["error_description"], host_busy.as_str());

    let other_host = DocumentSite::start_on("127.0.0.2").await;
    let shown = app.authorize(&app.request(&other_host.url("/good.json"))).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(shown.body.contains("Doc Client"), "{}", shown.body);
    assert_eq!(other_host.hits(), 1);
    for attempt in held {
        attempt.abort();
    }
}
