//! Publishing a gadget and a blueprint and reading them back (versions, bundles, listings), twins
//! published at once, and every refusal of a version that is not exact SemVer.

use crate::registry_support;

use registry_support::*;

use reqwest::StatusCode;
use serde_json::{Value, json};

crate::on_every_registry_backend!(
    publishes_and_reads_back_a_gadget_and_a_blueprint,
    twins_published_at_once_store_one,
    every_semver_refusal_has_its_exact_message,
);

async fn publishes_and_reads_back_a_gadget_and_a_blueprint(registry: Registry) {
    let token = registry.mint("acme", false);
    let (status, me) = registry.get("/whoami", Some(&token)).await;
    assert_eq!(
        (status, me),
        (StatusCode::OK, json!({ "publisher": "acme", "admin": false }))
    );
    let author = Author::new(1);
    registry.register_key(&token, &author).await;

    let manifest = gadget_manifest("@acme", "chart", "1.2.3", &author, GADGET_JS);
    let (status, published) = registry
        .post("/publish", Some(&token), &signed_publish(&manifest, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    let expected_sri = sri(GADGET_JS.as_bytes());
    assert_eq!(published["bundleSri"], expected_sri);
    assert_eq!(
        (published["scope"].as_str(), published["version"].as_str()),
        (Some("@acme"), Some("1.2.3"))
    );
    let bundle_url = published["bundleUrl"].as_str().unwrap().to_owned();
    assert!(bundle_url.starts_with(&registry.base), "{bundle_url}");

    // The version, with its signing metadata; the scope URL-encoded or not.
    for path in ["/pkg/@acme/chart/1.2.3", "/pkg/%40acme/chart/1.2.3"] {
        let (status, detail) = registry.get(path, Some(&token)).await;
        assert_eq!(status, StatusCode::OK, "{path}: {detail}");
        assert_eq!(detail["manifest"], manifest);
        assert_eq!(detail["bundleUrl"], bundle_url.as_str());
        assert_eq!(detail["bundleSri"], expected_sri);
        assert_eq!(detail["signature"]["algorithm"], "ed25519");
        assert_eq!(detail["signature"]["publicKeyId"], author.key_id());
        assert_eq!(detail["authorPublicKey"], author.public_key());
    }

    // The bundle: its bytes hash to the SRI, cached forever.
    let response = registry.client.get(&bundle_url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| response.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("cache-control"), "public, max-age=31536000, immutable");
    assert_eq!(header("content-type"), "text/javascript");
    let bytes = response.bytes().await.unwrap();
    assert_eq!(sri(&bytes), expected_sri);
    let missing = format!("{}/bundles/sha384/{}", registry.base, "0".repeat(96));
    assert_eq!(
        registry.client.get(missing).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    // A blueprint: its TSX is the bundle, served as text.
    let blueprint = blueprint_manifest("@acme", "board", "0.1.0", &author, BLUEPRINT_TSX);
    let (status, published) = registry
        .post(
            "/publish",
            Some(&token),
            &signed_publish(&blueprint, BLUEPRINT_TSX, &author),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    let response = registry
        .client
        .get(published["bundleUrl"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(response.text().await.unwrap(), BLUEPRINT_TSX);

    // The version listing, ascending by precedence.
    for version in ["1.10.0", "1.2.4-rc.1"] {
        let manifest = gadget_manifest("@acme", "chart", version, &author, GADGET_JS);
        let (status, body) = registry
            .post("/publish", Some(&token), &signed_publish(&manifest, GADGET_JS, &author))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    let versions: Vec<&str> = listing["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.2.3", "1.2.4-rc.1", "1.10.0"]);
    assert_eq!(listing["versions"][0]["yanked"], false);
    assert_eq!(listing["truncated"], false, "every version is listed");
    let (status, body) = registry.get("/pkg/@acme/nothing", Some(&token)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, body) = registry.get("/pkg/@acme/chart/9.9.9", Some(&token)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    // The schema the manifest was checked against, and the OpenAPI document.
    let (status, schema) = registry.get("/schemas/manifest.json", None).await;
    assert_eq!(
        (status, schema["title"].as_str()),
        (StatusCode::OK, Some("Artifact manifest"))
    );
    let (status, openapi) = registry.get("/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(openapi["paths"]["/publish"]["post"].is_object(), "{openapi}");
}

/// Publishes of one release differing only in build metadata, all at once: each reads the
/// package before any is stored, so only the store can keep them apart. One is stored; every
/// other is 409 `version_exists` naming the stored one (docs/registry.md).
async fn twins_published_at_once_store_one(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let versions: Vec<String> = (0..8).map(|build| format!("1.0.0+build.{build}")).collect();
    let bodies: Vec<Value> = versions
        .iter()
        .map(|version| {
            signed_publish(
                &gadget_manifest("@acme", "chart", version, &author, GADGET_JS),
                GADGET_JS,
                &author,
            )
        })
        .collect();
    let answers =
        futures_util::future::join_all(bodies.iter().map(|body| registry.post("/publish", Some(&token), body))).await;
    let stored: Vec<&str> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::CREATED)
        .map(|(_, published)| published["version"].as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), 1, "{answers:?}");
    let winner = stored[0];
    for ((status, refused), version) in answers.iter().zip(&versions).filter(|(_, version)| *version != winner) {
        assert_eq!(
            (*status, refused["error"].as_str()),
            (StatusCode::CONFLICT, Some("version_exists")),
            "{version}: {refused}"
        );
        let expected = format!(
            "@acme/chart@{winner} already exists and @acme/chart@{version} differs from it only in build metadata"
        );
        assert!(refused["message"].as_str().unwrap().starts_with(&expected), "{refused}");
    }
    let (_, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(listing["versions"].as_array().map(Vec::len), Some(1), "{listing}");
}

async fn every_semver_refusal_has_its_exact_message(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    const RANGE: &str = "a range is not a version; name an exact version such as 1.2.3";
    let rows = [
        (
            "latest",
            "`latest` is not a version; name an exact version such as 1.2.3",
        ),
        ("^1.2.3", RANGE),
        ("~1.2.3", RANGE),
        (">=1.0.0", RANGE),
        ("1.x", RANGE),
        ("*", RANGE),
        ("1.2.3 - 2.0.0", RANGE),
        ("1.2.3 || 2.0.0", RANGE),
        ("01.2.3", "invalid leading zero in major version number"),
        ("1.02.3", "invalid leading zero in minor version number"),
        ("1.2.03", "invalid leading zero in patch version number"),
        ("1.2.3-01", "invalid leading zero in pre-release identifier"),
        ("1.2", "unexpected end of input while parsing minor version number"),
        ("v1.2.3", "unexpected character 'v' while parsing major version number"),
        ("", "empty string, expected a semver version"),
    ];
    for (version, reason) in rows {
        let manifest = gadget_manifest("@acme", "chart", version, &author, GADGET_JS);
        let (status, refused) = registry
            .post("/publish", Some(&token), &signed_publish(&manifest, GADGET_JS, &author))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{version}");
        assert_eq!(refused["error"], "invalid_version", "{version}");
        assert_eq!(
            refused["message"],
            format!("invalid version {version:?}: {reason}"),
            "{version}"
        );
    }
    let (status, refused) = registry.get("/pkg/@acme/chart/latest", Some(&token)).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_version"))
    );
    let (status, refused) = registry.get("/pkg/@acme/chart/01.0.0", Some(&token)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused["message"],
        "invalid version \"01.0.0\": invalid leading zero in major version number"
    );
}
