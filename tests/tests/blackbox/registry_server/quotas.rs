//! The publish quotas of `[registry]` over real HTTP, on every backend: publishes racing at a
//! package's version cap store exactly as many versions as it holds, and a publisher's stored
//! bytes are bounded; each refusal is 403 `quota_exceeded` with its exact message.

use crate::registry_support;

use registry_support::*;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// A registry whose `[registry]` settings are adjusted by `adjust`, on each backend.
macro_rules! on_every_backend_with {
    ($scenario:ident, $adjust:expr) => {
        mod $scenario {
            async fn run(backend: svc_tests::Backend) {
                let registry = super::Registry::spawn_with(stringify!($scenario), backend, $adjust).await;
                if let Some(registry) = registry {
                    super::$scenario(registry).await;
                }
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                run(svc_tests::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                run(svc_tests::Backend::Postgres).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn mariadb() {
                run(svc_tests::Backend::Mariadb).await;
            }
        }
    };
}

const VERSION_CAP: u64 = 3;
const RACERS: usize = 8;

on_every_backend_with!(racing_publishes_stop_at_the_version_cap, |settings| {
    settings.accept_unverified_sigstore = true;
    settings.max_versions_per_package = super::VERSION_CAP;
});

/// What a version costs its publisher: its bundle and its manifest as compact JSON.
fn cost(manifest: &Value, bundle: &str) -> u64 {
    (bundle.len() + serde_json::to_vec(manifest).unwrap().len()) as u64
}

fn gadget(name: &str, version: &str, author: &Author) -> (Value, Value) {
    let manifest = gadget_manifest("@acme", name, version, author, GADGET_JS);
    let body = signed_publish(&manifest, GADGET_JS, author);
    (manifest, body)
}

/// The cost of three gadgets named `a`, `b` and `c` at 1.0.0 by `Author::new(1)` (all equal), less
/// one byte: two fit, the third does not.
fn two_and_a_bit() -> u64 {
    let (manifest, _) = gadget("a", "1.0.0", &Author::new(1));
    3 * cost(&manifest, GADGET_JS) - 1
}

on_every_backend_with!(publishes_refused_at_the_cap_leave_no_bundle, |settings| {
    settings.max_versions_per_package = super::VERSION_CAP;
});

on_every_backend_with!(a_publishers_stored_bytes_are_bounded, |settings| {
    settings.max_publisher_stored_bytes = super::two_and_a_bit();
});

async fn racing_publishes_stop_at_the_version_cap(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let racers: Vec<_> = (0..RACERS)
        .map(|patch| {
            let (_, body) = gadget("chart", &format!("1.0.{patch}"), &author);
            let request = registry
                .client
                .post(format!("{}/publish", registry.base))
                .bearer_auth(&token)
                .json(&body);
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut stored = 0;
    let mut bundle_url = None;
    for racer in racers {
        let (status, body) = racer.await.unwrap();
        if status == StatusCode::CREATED {
            stored += 1;
            bundle_url = body["bundleUrl"].as_str().map(str::to_owned);
            continue;
        }
        assert_eq!(
            (status, body),
            (
                StatusCode::FORBIDDEN,
                json!({ "error": "quota_exceeded",
                        "message": "@acme/chart holds 3 versions, the most a package may hold; publish under another name" })
            )
        );
    }
    assert_eq!(stored, VERSION_CAP);
    let (status, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    assert_eq!(listing["versions"].as_array().unwrap().len() as u64, VERSION_CAP);
    assert_eq!(listing["truncated"], false);
    // Every racer had the same bundle: the refused ones leave it to the stored versions.
    let bundle_url = bundle_url.unwrap();
    let status = registry.client.get(&bundle_url).send().await.unwrap().status();
    assert_eq!(status, StatusCode::OK, "{bundle_url}");
}

/// Racing publishes of versions with bundles of their own: those refused at the cap, whether
/// before their bundle was written or as their version was stored (having lost the race), leave
/// no bundle file behind; each stored version's bundle is served.
async fn publishes_refused_at_the_cap_leave_no_bundle(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let racers: Vec<_> = (0..RACERS)
        .map(|patch| {
            let bundle = format!("{GADGET_JS}// build {patch}\n");
            let manifest = gadget_manifest("@acme", "chart", &format!("1.0.{patch}"), &author, &bundle);
            let request = registry
                .client
                .post(format!("{}/publish", registry.base))
                .bearer_auth(&token)
                .json(&signed_publish(&manifest, &bundle, &author));
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut kept = Vec::new();
    for racer in racers {
        let (status, body) = racer.await.unwrap();
        match status {
            StatusCode::CREATED => kept.push(body["bundleUrl"].as_str().unwrap().to_owned()),
            status => assert_eq!(
                (status, body["error"].as_str()),
                (StatusCode::FORBIDDEN, Some("quota_exceeded"))
            ),
        }
    }
    assert_eq!(kept.len() as u64, VERSION_CAP);
    let mut expected: Vec<String> = kept
        .iter()
        .map(|url| format!("{}.js", url.rsplit('/').next().unwrap()))
        .collect();
    expected.sort();
    assert_eq!(registry.bundle_files(), expected, "only the stored versions' bundles");
    for url in &kept {
        let status = registry.client.get(url).send().await.unwrap().status();
        assert_eq!(status, StatusCode::OK, "{url}");
    }
}

async fn a_publishers_stored_bytes_are_bounded(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let mut spent = 0;
    for name in ["a", "b"] {
        let (manifest, body) = gadget(name, "1.0.0", &author);
        let (status, published) = registry.post("/publish", Some(&token), &body).await;
        assert_eq!(status, StatusCode::CREATED, "{published}");
        spent += cost(&manifest, GADGET_JS);
    }
    let (manifest, body) = gadget("c", "1.0.0", &author);
    let (status, refused) = registry.post("/publish", Some(&token), &body).await;
    let message = format!(
        "publisher acme stores {spent} bytes, and this version's {} would take it past the {} a publisher may store",
        cost(&manifest, GADGET_JS),
        two_and_a_bit()
    );
    assert_eq!(
        (status, refused),
        (
            StatusCode::FORBIDDEN,
            json!({ "error": "quota_exceeded", "message": message })
        )
    );
    let (status, _) = registry.get("/pkg/@acme/c", Some(&token)).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "nothing of the refused version is stored"
    );

    // Another publisher's bytes are its own.
    let other = registry.mint("beta", false);
    let beta = Author::new(2);
    registry.register_key(&other, &beta).await;
    let manifest = gadget_manifest("@beta", "a", "1.0.0", &beta, GADGET_JS);
    let (status, published) = registry
        .post("/publish", Some(&other), &signed_publish(&manifest, GADGET_JS, &beta))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
}
