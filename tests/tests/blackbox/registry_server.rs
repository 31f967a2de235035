//! The artifact registry over real HTTP (docs/registry.md), on SQLite, PostgreSQL and MariaDB: publish a
//! gadget and a blueprint, read them back, search by each filter, fetch bundles by hash, and
//! every refusal with its exact code: credentials, versions, bundles, keys, the conformance gate,
//! republishing and yanking.

use crate::registry_support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use registry_support::*;
use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_attest::{ed25519, payload};
use svc_tests::raw_http::{closed_within, dribble_until_closed};

crate::on_every_registry_backend!(
    publishes_and_reads_back_a_gadget_and_a_blueprint,
    search_filters_and_compose,
    republishing_is_409_and_a_yanked_version_is_410_with_its_manifest,
    twins_published_at_once_store_one,
    every_semver_refusal_has_its_exact_message,
    tampered_bundles_and_wrong_keys_are_refused,
    a_rotated_key_leaves_old_versions_verifiable,
    the_conformance_gate_names_rule_and_path,
    a_bundle_nested_past_any_stack_is_refused_and_the_registry_lives_on,
    credentials_guard_writes_and_private_reads,
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

async fn search_filters_and_compose(registry: Registry) {
    let acme = registry.mint("acme", false);
    let globex = registry.mint("globex", false);
    let (acme_key, globex_key) = (Author::new(1), Author::new(2));
    registry.register_key(&acme, &acme_key).await;
    registry.register_key(&globex, &globex_key).await;
    let publish = |token: String, body: Value| {
        let registry = &registry;
        async move {
            let (status, answer) = registry.post("/publish", Some(&token), &body).await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
    };
    let chart = gadget_manifest("@acme", "chart", "1.0.0", &acme_key, GADGET_JS);
    publish(acme.clone(), signed_publish(&chart, GADGET_JS, &acme_key)).await;
    let chart2 = gadget_manifest("@acme", "chart", "1.1.0", &acme_key, GADGET_JS);
    publish(acme.clone(), signed_publish(&chart2, GADGET_JS, &acme_key)).await;
    let board = blueprint_manifest("@acme", "board", "1.0.0", &acme_key, BLUEPRINT_TSX);
    publish(acme.clone(), signed_publish(&board, BLUEPRINT_TSX, &acme_key)).await;
    publish(globex.clone(), sigstore_publish("@globex", "dates", "2.0.0", GADGET_JS)).await;

    let names = |body: &Value| -> Vec<String> {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}/{}@{}",
                    r["scope"].as_str().unwrap(),
                    r["name"].as_str().unwrap(),
                    r["latestVersion"].as_str().unwrap()
                )
            })
            .collect()
    };
    let rows: [(&str, &[&str]); 9] = [
        ("", &["@acme/board@1.0.0", "@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?kind=blueprint", &["@acme/board@1.0.0"]),
        ("?kind=gadget", &["@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?hook=useSparkline", &["@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?tag=chart", &["@acme/chart@1.1.0"]),
        ("?author=globex", &["@globex/dates@2.0.0"]),
        ("?q=BOARD", &["@acme/board@1.0.0"]),
        ("?kind=gadget&author=acme&tag=svg", &["@acme/chart@1.1.0"]),
        ("?kind=blueprint&hook=useSparkline", &[]),
    ];
    for (query, expected) in rows {
        let (status, body) = registry.get(&format!("/search{query}"), Some(&acme)).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(names(&body), expected, "{query}");
    }
    let (_, body) = registry.get("/search?author=acme", Some(&acme)).await;
    let chart = &body["results"][1];
    assert_eq!(
        (&chart["kind"], &chart["author"], &chart["description"], &chart["tags"]),
        (
            &json!("gadget"),
            &json!("acme"),
            &json!("Sparkline and bar charts"),
            &json!(["chart", "svg"])
        )
    );
    // Without a credential only public artifacts are listed.
    let (status, body) = registry.get("/search", None).await;
    assert_eq!(
        (status, names(&body)),
        (StatusCode::OK, vec!["@globex/dates@2.0.0".to_owned()])
    );
    let (status, body) = registry.get("/search?kind=widget", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    // Public reads need no credential.
    let (status, detail) = registry.get("/pkg/@globex/dates/2.0.0", None).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["signature"]["algorithm"], "sigstore");
    assert!(detail["signature"]["sigstoreBundle"].is_object());

    // A private version above a public one: a caller without a credential is answered the
    // highest version it may read, a publisher the highest of all.
    let dates3 = gadget_manifest("@globex", "dates", "3.0.0-beta.1", &globex_key, GADGET_JS);
    publish(globex.clone(), signed_publish(&dates3, GADGET_JS, &globex_key)).await;
    let (_, body) = registry.get("/search?author=globex", None).await;
    assert_eq!(names(&body), ["@globex/dates@2.0.0"]);
    let (_, body) = registry.get("/search?author=globex", Some(&acme)).await;
    assert_eq!(names(&body), ["@globex/dates@3.0.0-beta.1"]);
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

async fn republishing_is_409_and_a_yanked_version_is_410_with_its_manifest(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, GADGET_JS);
    let body = signed_publish(&manifest, GADGET_JS, &author);
    let (status, _) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, refused) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::CONFLICT, Some("version_exists"))
    );
    // Build metadata does not make another version (SemVer 2.0.0 §10): `1.0.0+fix` is 1.0.0.
    let republish_as = |version: &str| {
        let manifest = gadget_manifest("@acme", "chart", version, &author, GADGET_JS);
        signed_publish(&manifest, GADGET_JS, &author)
    };
    let (status, refused) = registry
        .post("/publish", Some(&token), &republish_as("1.0.0+fix"))
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::CONFLICT, Some("version_exists")),
        "{refused}"
    );
    assert!(
        refused["message"].as_str().unwrap().starts_with(
            "@acme/chart@1.0.0 already exists and @acme/chart@1.0.0+fix differs from it only in build metadata"
        ),
        "{refused}"
    );
    let (status, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listing["versions"].as_array().map(Vec::len), Some(1), "{listing}");

    // Only an admin yanks over HTTP.
    let yank = json!({ "scope": "@acme", "name": "chart", "version": "1.0.0", "reason": "leaks" });
    let (status, refused) = registry.post("/admin/yank", Some(&token), &yank).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );

    // `svc registry yank` on the registry host.
    let (ok, stdout, stderr) = registry.cli(&["yank", "@acme/chart@1.0.0", "--reason", "leaks the token"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("yanked @acme/chart@1.0.0"), "{stdout}");
    let (status, gone) = registry.get("/pkg/@acme/chart/1.0.0", Some(&token)).await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(gone["error"], "version_yanked");
    assert_eq!(gone["reason"], "leaks the token");
    assert_eq!(gone["manifest"], manifest);
    let (_, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(listing["versions"][0]["yanked"], true);
    let (_, search) = registry.get("/search?author=acme", Some(&token)).await;
    assert_eq!(
        search["results"],
        json!([]),
        "a package with only yanked versions is not listed"
    );

    // Yanked, never deleted: the triple stays taken, with or without build metadata.
    for body in [body.clone(), republish_as("1.0.0+rebuilt")] {
        let (status, refused) = registry.post("/publish", Some(&token), &body).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (StatusCode::CONFLICT, Some("version_exists")),
            "{refused}"
        );
    }

    // Yanking again keeps the first reason.
    let admin = registry.mint("root", true);
    let (status, answer) = registry.post("/admin/yank", Some(&admin), &yank).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        (answer["alreadyYanked"].as_bool(), answer["reason"].as_str()),
        (Some(true), Some("leaks the token"))
    );
    let unknown = json!({ "scope": "@acme", "name": "chart", "version": "3.0.0", "reason": "x" });
    let (status, refused) = registry.post("/admin/yank", Some(&admin), &unknown).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (ok, _, stderr) = registry.cli(&["yank", "@acme/chart@latest", "--reason", "x"]);
    assert!(!ok);
    assert!(stderr.contains("invalid version \"latest\""), "{stderr}");
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

async fn tampered_bundles_and_wrong_keys_are_refused(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, GADGET_JS);
    let good = signed_publish(&manifest, GADGET_JS, &author);
    let refusal = |body: Value| {
        let (registry, token) = (&registry, token.clone());
        async move {
            let (status, refused) = registry.post("/publish", Some(&token), &body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
            (
                refused["error"].as_str().unwrap().to_owned(),
                refused["message"].as_str().unwrap().to_owned(),
            )
        }
    };

    // The bundle bytes changed after signing: sha384 no longer matches bundleSha384.
    let mut tampered = good.clone();
    tampered["bundle"] = json!(STANDARD.encode(format!("{GADGET_JS}// evil\n")));
    let (code, message) = refusal(tampered).await;
    assert_eq!(code, "bundle_mismatch");
    assert!(message.contains("bundleSha384"), "{message}");
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("bundle");
    assert_eq!(refusal(missing).await.0, "bundle_mismatch");

    // A key id nobody registered (in the manifest and the signature alike).
    let stranger = Author::new(9);
    let mut unknown = gadget_manifest("@acme", "chart", "1.0.0", &stranger, GADGET_JS);
    unknown["authorPublicKey"] = json!(author.public_key());
    let (code, message) = refusal(signed_publish(&unknown, GADGET_JS, &stranger)).await;
    assert_eq!(code, "unknown_key");
    assert!(message.contains(&stranger.key_id()), "{message}");
    // The signature's key id differs from the manifest's.
    let mut mismatched = good.clone();
    mismatched["signature"]["publicKeyId"] = json!(stranger.key_id());
    assert_eq!(refusal(mismatched).await.0, "unknown_key");

    // Signed by another key than the one named: the signature does not verify.
    let mut forged = good.clone();
    forged["signature"]["value"] = json!(stranger.sign(&payload::gadget_payload(GADGET_JS.as_bytes())));
    let (code, message) = refusal(forged).await;
    assert_eq!(code, "bad_signature");
    assert!(message.contains("does not verify"), "{message}");
    // A private artifact with a Sigstore bundle breaks the trust model.
    let mut keyless = good.clone();
    keyless["signature"] = json!({ "algorithm": "sigstore", "sigstoreBundle": {} });
    assert_eq!(refusal(keyless).await.0, "bad_signature");
    // So does a public one signed with a registered Ed25519 key (public artifacts are keyless).
    let mut public = manifest.clone();
    public["visibility"] = json!("public");
    let (code, message) = refusal(signed_publish(&public, GADGET_JS, &author)).await;
    assert_eq!(code, "bad_signature");
    assert!(
        message.contains("a public artifact is signed with sigstore, not ed25519"),
        "{message}"
    );

    // A gadget's stated bundleSri must be the bundle's.
    let mut wrong_sri = manifest.clone();
    wrong_sri["bundleSri"] = json!(sri(b"other bytes"));
    let (code, message) = refusal(signed_publish(&wrong_sri, GADGET_JS, &author)).await;
    assert_eq!(code, "invalid_manifest");
    assert!(message.contains("differs from `signature.bundleSha384`"), "{message}");

    // A bad body is JSON too.
    let (code, _) = refusal(json!({ "manifest": manifest })).await;
    assert_eq!(code, "invalid_request");
    let mut bad_base64 = good.clone();
    bad_base64["bundle"] = json!("%%%");
    assert_eq!(refusal(bad_base64).await.0, "invalid_request");

    // Nothing was stored.
    let (status, _) = registry.get("/pkg/@acme/chart/1.0.0", Some(&token)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Stating the bundle's own bundleSri (Document 3's gadget field) is accepted.
    let mut stated = manifest.clone();
    stated["bundleSri"] = json!(sri(GADGET_JS.as_bytes()));
    let (status, published) = registry
        .post("/publish", Some(&token), &signed_publish(&stated, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    assert_eq!(published["bundleSri"], stated["bundleSri"]);
}

async fn a_rotated_key_leaves_old_versions_verifiable(registry: Registry) {
    let token = registry.mint("acme", false);
    let (old_key, new_key) = (Author::new(1), Author::new(2));
    registry.register_key(&token, &old_key).await;
    let v1 = gadget_manifest("@acme", "chart", "1.0.0", &old_key, GADGET_JS);
    let (status, _) = registry
        .post("/publish", Some(&token), &signed_publish(&v1, GADGET_JS, &old_key))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // Rotation: a new key registered; re-registering the old one is idempotent (200).
    registry.register_key(&token, &new_key).await;
    let (status, again) = registry
        .post(
            "/author-keys",
            Some(&token),
            &json!({ "publicKey": old_key.public_key() }),
        )
        .await;
    assert_eq!(
        (status, again["publicKeyId"].as_str()),
        (StatusCode::OK, Some(old_key.key_id().as_str()))
    );
    let v2 = gadget_manifest("@acme", "chart", "2.0.0", &new_key, GADGET_JS);
    let (status, _) = registry
        .post("/publish", Some(&token), &signed_publish(&v2, GADGET_JS, &new_key))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    // Each version carries the key that signed it, and verifies with it.
    for (version, key) in [("1.0.0", &old_key), ("2.0.0", &new_key)] {
        let (status, detail) = registry.get(&format!("/pkg/@acme/chart/{version}"), Some(&token)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(detail["authorPublicKey"], key.public_key(), "{version}");
        assert_eq!(detail["signature"]["publicKeyId"], key.key_id(), "{version}");
        // Verified as `svc install` verifies: the pinned key derives the named id, then the
        // signature over the payload.
        let pinned = ed25519::decode_public_key(detail["authorPublicKey"].as_str().unwrap()).unwrap();
        ed25519::verify_with_key_id(
            &pinned,
            detail["signature"]["publicKeyId"].as_str().unwrap(),
            &payload::gadget_payload(GADGET_JS.as_bytes()),
            detail["signature"]["value"].as_str().unwrap(),
        )
        .expect("the old version still verifies with its own key");
    }
    // Key ids are base64: `/` and `+` are percent-encoded in the path.
    let encoded_id = old_key.key_id().replace('+', "%2B").replace('/', "%2F");
    let (status, key) = registry.get(&format!("/author-keys/{encoded_id}"), None).await;
    assert_eq!((status, key["publisher"].as_str()), (StatusCode::OK, Some("acme")));

    // Another publisher can neither claim acme's key nor sign acme's scope with its own.
    let globex = registry.mint("globex", false);
    let (status, refused) = registry
        .post(
            "/author-keys",
            Some(&globex),
            &json!({ "publicKey": old_key.public_key() }),
        )
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::CONFLICT, Some("key_exists"))
    );
    let theirs = Author::new(3);
    registry.register_key(&globex, &theirs).await;
    let mut v3 = gadget_manifest("@globex", "chart", "1.0.0", &new_key, GADGET_JS);
    v3["authorPublicKey"] = json!(new_key.public_key());
    let (status, refused) = registry
        .post("/publish", Some(&globex), &signed_publish(&v3, GADGET_JS, &new_key))
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unknown_key"))
    );
    let (status, refused) = registry
        .post("/author-keys", Some(&token), &json!({ "publicKey": "c2hvcnQ=" }))
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
}

async fn the_conformance_gate_names_rule_and_path(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let check = |manifest: Value, bundle: &str| {
        let (registry, token) = (&registry, token.clone());
        let body = json!({ "manifest": manifest, "bundle": STANDARD.encode(bundle) });
        async move {
            let (status, answer) = registry.post("/conformance/check", Some(&token), &body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer
        }
    };
    let gadget = |bundle: &str| gadget_manifest("@acme", "chart", "1.0.0", &author, bundle);
    let blueprint = |source: &str| blueprint_manifest("@acme", "board", "1.0.0", &author, source);
    assert_eq!(check(gadget(GADGET_JS), GADGET_JS).await, json!({ "ok": true }));
    assert_eq!(
        check(blueprint(BLUEPRINT_TSX), BLUEPRINT_TSX).await,
        json!({ "ok": true })
    );

    let missing_hook = "export function useSparkline(v) { return v; }\n";
    let extra_export = format!("{GADGET_JS}export const useExtra = 1;\n");
    let not_a_module = "export function useSparkline( {";
    let relative = format!("import x from './x.js';\n{GADGET_JS}");
    let no_compile = "export default function Board() { return <div>; }\n";
    let throws = "export default function Board() { throw new Error(\"boom at render\"); }\n";
    let mut bad_tag = gadget(GADGET_JS);
    bad_tag["tags"] = json!(["Not A Tag"]);
    let mut bad_version = gadget(GADGET_JS);
    bad_version["version"] = json!("latest");
    let rows = [
        (
            check(gadget(missing_hook), missing_hook).await,
            "gadget_exports",
            "/manifest/gadget/exports/1/hook",
            "useBars",
        ),
        (
            check(gadget(&extra_export), &extra_export).await,
            "gadget_exports",
            "/bundle",
            "useExtra",
        ),
        (
            check(gadget(not_a_module), not_a_module).await,
            "gadget_module",
            "/bundle",
            "",
        ),
        (
            check(gadget(&relative), &relative).await,
            "gadget_module",
            "/bundle",
            "./x.js",
        ),
        (
            check(blueprint(no_compile), no_compile).await,
            "blueprint_compiles",
            "/bundle",
            "line 1",
        ),
        (
            check(blueprint(throws), throws).await,
            "blueprint_renders",
            "/manifest/blueprint/fixtureProps",
            "boom at render",
        ),
        (
            check(bad_tag, GADGET_JS).await,
            "manifest_schema",
            "/manifest/tags/0",
            "",
        ),
        (
            check(bad_version, GADGET_JS).await,
            "version_format",
            "/manifest/version",
            "latest",
        ),
    ];
    for (answer, rule, path, mentions) in rows {
        assert_eq!(answer["ok"], false, "{answer}");
        let failure = &answer["failures"][0];
        assert_eq!(
            (failure["rule"].as_str(), failure["path"].as_str()),
            (Some(rule), Some(path)),
            "{answer}"
        );
        assert!(failure["message"].as_str().unwrap().contains(mentions), "{answer}");
    }
    let body = json!({ "manifest": gadget(GADGET_JS) });
    let (_, answer) = registry.post("/conformance/check", Some(&token), &body).await;
    assert_eq!((answer["failures"][0]["rule"].as_str()), Some("bundle_required"));

    // Publishing runs the same gate: 400 conformance_failed naming the rule and the path.
    let manifest = gadget(missing_hook);
    let (status, refused) = registry
        .post(
            "/publish",
            Some(&token),
            &signed_publish(&manifest, missing_hook, &author),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (
            refused["error"].as_str(),
            refused["rule"].as_str(),
            refused["path"].as_str()
        ),
        (
            Some("conformance_failed"),
            Some("gadget_exports"),
            Some("/manifest/gadget/exports/1/hook")
        )
    );
    let manifest = blueprint(throws);
    let (status, refused) = registry
        .post("/publish", Some(&token), &signed_publish(&manifest, throws, &author))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (refused["rule"].as_str(), refused["path"].as_str()),
        (Some("blueprint_renders"), Some("/manifest/blueprint/fixtureProps"))
    );
    // A blueprint may import a gadget its contract lists, once that version is published here.
    let uses_chart = "import { useProps } from \"@svc/gadgets\";\n\
                      import { useSparkline } from \"@acme/chart\";\n\
                      export default function Board() {\n\
                        const props = useProps<{ title: string }>();\n\
                        return <h1>{props.title} {useSparkline([1])}</h1>;\n\
                      }\n";
    let mut with_chart = blueprint(uses_chart);
    with_chart["blueprint"]["contract"]["clientCapabilities"] = json!({ "gadgets": { "@acme/chart": "1.0.0" } });
    let answer = check(with_chart.clone(), uses_chart).await;
    assert_eq!(
        (
            answer["failures"][0]["rule"].as_str(),
            answer["failures"][0]["path"].as_str()
        ),
        (
            Some("blueprint_gadgets"),
            Some("/manifest/blueprint/contract/clientCapabilities/gadgets/@acme~1chart")
        ),
        "{answer}"
    );
    assert!(
        answer["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("@acme/chart 1.0.0: this registry holds no such gadget version"),
        "{answer}"
    );
    let chart = gadget(GADGET_JS);
    let (status, _) = registry
        .post("/publish", Some(&token), &signed_publish(&chart, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(check(with_chart.clone(), uses_chart).await, json!({ "ok": true }));
    // Without the contract listing it, the same import does not compile.
    let answer = check(blueprint(uses_chart), uses_chart).await;
    assert_eq!(answer["failures"][0]["rule"], "blueprint_compiles", "{answer}");
    // A yanked gadget version is no longer importable.
    let (ok, _, stderr) = registry.cli(&["yank", "@acme/chart@1.0.0", "--reason", "broken"]);
    assert!(ok, "{stderr}");
    let answer = check(with_chart, uses_chart).await;
    assert!(
        answer["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("this version was yanked"),
        "{answer}"
    );

    // A schema failure at publish is invalid_manifest, with its path.
    let mut extra = gadget(GADGET_JS);
    extra["unexpected"] = json!(true);
    let (status, refused) = registry
        .post("/publish", Some(&token), &signed_publish(&extra, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (refused["error"].as_str(), refused["path"].as_str()),
        (Some("invalid_manifest"), Some("/manifest"))
    );
}

/// A gadget bundle past 64 KiB is parsed by a process of its own: one nested deeper than any
/// parse stack (a megabyte of `(`, which overflowed the registry's own and aborted it) is
/// refused by the gate, and a long bundle of ordinary nesting passes.
async fn a_bundle_nested_past_any_stack_is_refused_and_the_registry_lives_on(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let check = |bundle: String| {
        let (registry, token) = (&registry, token.clone());
        let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, &bundle);
        let body = json!({ "manifest": manifest, "bundle": STANDARD.encode(&bundle) });
        async move {
            let (status, answer) = registry.post("/conformance/check", Some(&token), &body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer
        }
    };
    let deep = format!("{GADGET_JS}export const useDeep = {}1", "(".repeat(1 << 20));
    let answer = check(deep).await;
    let failure = &answer["failures"][0];
    assert_eq!(
        (
            answer["ok"].as_bool(),
            failure["rule"].as_str(),
            failure["path"].as_str()
        ),
        (Some(false), Some("gadget_module"), Some("/bundle")),
        "{answer}"
    );
    assert!(
        failure["message"].as_str().unwrap().contains("nests deeper"),
        "{answer}"
    );
    let long = format!("{GADGET_JS}export const notes = \"{}\";\n", "n".repeat(200 * 1024));
    let answer = check(long).await;
    let failure = &answer["failures"][0];
    assert_eq!(failure["rule"], "gadget_exports", "read in the child: {answer}");
    assert!(failure["message"].as_str().unwrap().contains("notes"), "{answer}");
}

async fn credentials_guard_writes_and_private_reads(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, GADGET_JS);
    let body = signed_publish(&manifest, GADGET_JS, &author);

    // No credential, or an unknown one: 401 on every write, with the challenge.
    for bearer in [None, Some("svcreg_not-a-token")] {
        let response = registry
            .client
            .post(format!("{}/publish", registry.base))
            .json(&body)
            .header("authorization", bearer.map_or(String::new(), |t| format!("Bearer {t}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"registry\"");
        let refused: Value = response.json().await.unwrap();
        assert_eq!(refused["error"], "unauthorized");
        for path in ["/author-keys", "/conformance/check"] {
            let (status, refused) = registry
                .post(path, bearer, &json!({ "publicKey": author.public_key() }))
                .await;
            assert_eq!(
                (status, refused["error"].as_str()),
                (StatusCode::UNAUTHORIZED, Some("unauthorized")),
                "{path}"
            );
        }
        let (status, _) = registry.get("/whoami", bearer).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    registry.register_key(&token, &author).await;
    let (status, published) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(status, StatusCode::CREATED);

    // The public reads need no token, but one that is sent must be valid: an unknown token is
    // 401 there too, so a typo never passes for an anonymous read.
    let bundle_path = published["bundleUrl"]
        .as_str()
        .unwrap()
        .strip_prefix(&registry.base)
        .unwrap()
        .to_owned();
    let key_path = format!(
        "/author-keys/{}",
        author.key_id().replace('+', "%2B").replace('/', "%2F")
    );
    for path in [
        key_path.as_str(),
        bundle_path.as_str(),
        "/search",
        "/pkg/@acme/chart/1.0.0",
    ] {
        let response = registry
            .client
            .get(format!("{}{path}", registry.base))
            .bearer_auth("svcreg_not-a-token")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer realm=\"registry\"",
            "{path}"
        );
        let refused: Value = response.json().await.unwrap();
        assert_eq!(refused["error"], "unauthorized", "{path}");
        for bearer in [None, Some(token.as_str())] {
            let status = registry.get(path, bearer).await.0;
            let expected = if bearer.is_none() && path.starts_with("/pkg/") {
                StatusCode::UNAUTHORIZED // a private version
            } else {
                StatusCode::OK
            };
            assert_eq!(status, expected, "{path} with {bearer:?}");
        }
    }

    // A private version: 401 without a credential, readable with any valid one.
    for path in ["/pkg/@acme/chart/1.0.0", "/pkg/@acme/chart"] {
        let (status, refused) = registry.get(path, None).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("unauthorized")),
            "{path}"
        );
    }
    let reader = registry.mint("someone", false);
    let (status, _) = registry.get("/pkg/@acme/chart/1.0.0", Some(&reader)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = registry.get("/pkg/@acme/chart/1.0.0", Some("svcreg_wrong")).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );

    // A publisher owns only its own scope.
    let manifest = gadget_manifest("@acme", "chart", "2.0.0", &author, GADGET_JS);
    let (status, refused) = registry
        .post(
            "/publish",
            Some(&reader),
            &signed_publish(&manifest, GADGET_JS, &author),
        )
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, refused) = registry.get("/nowhere", None).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

/// `svc registry serve` as a real process: it prints where it listens and answers there.
#[tokio::test]
async fn svc_registry_serve_listens_where_it_says() {
    let registry = RegistryProcess::start(None);
    let health: Value = reqwest::get(format!("{}/health", registry.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({ "status": "ok" }));
}

/// `svc registry serve` logs as `svc serve` does: in the format `server.log_format` of its
/// configuration names, and `--log-format` overrides it (before, it always logged plain text).
#[tokio::test]
async fn svc_registry_serve_logs_in_the_configured_format() {
    let is_json = |line: &str| serde_json::from_str::<Value>(line).is_ok_and(|v| v.is_object());
    let json_lines = registry_log("[server]\nlog_format = \"json\"\n", &[]).await;
    assert!(
        !json_lines.is_empty(),
        "the registry logged nothing under RUST_LOG=debug"
    );
    assert!(json_lines.iter().all(|l| is_json(l)), "{json_lines:#?}");
    let text_lines = registry_log("[server]\nlog_format = \"json\"\n", &["--log-format", "text"]).await;
    assert!(
        !text_lines.is_empty(),
        "the registry logged nothing under RUST_LOG=debug"
    );
    assert!(!text_lines.iter().any(|l| is_json(l)), "{text_lines:#?}");
}

/// The non-empty lines `svc registry serve` wrote to stderr under `RUST_LOG=debug`, from its
/// start to its first answer to `/health`.
async fn registry_log(config: &str, flags: &[&str]) -> Vec<String> {
    let registry = RegistryProcess::start_logging(config, flags);
    let health = reqwest::get(format!("{}/health", registry.base)).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    registry.stopped_log()
}

/// The registry is served under `[connections]` as `svc serve` is: a head that keeps dribbling in
/// is cut off at the header-read timeout, and a body that stops arriving is answered 408 once it
/// has paused for the idle timeout, and its connection closed (before, both were held for as long
/// as the client kept the socket open).
#[tokio::test]
async fn svc_registry_serve_cuts_off_slow_heads_and_stalled_bodies() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let registry = RegistryProcess::start(Some(
        "[connections]\nheader_read_timeout_seconds = 1\nidle_timeout_seconds = 2\n",
    ));
    let mut slow_head = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let started = std::time::Instant::now();
    slow_head
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    let every = std::time::Duration::from_millis(200);
    let after = dribble_until_closed(&mut slow_head, every, started, std::time::Duration::from_secs(6))
        .await
        .expect("a head still arriving after the header-read timeout is cut off");
    assert!(
        after >= std::time::Duration::from_millis(900) && after < std::time::Duration::from_secs(3),
        "closed after {after:?}"
    );

    let token = registry.mint("acme");
    let mut stalled_body = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let head = format!(
        "POST /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"manifest\""
    );
    stalled_body.write_all(head.as_bytes()).await.unwrap();
    let (after, answer) = closed_within(&mut stalled_body, std::time::Duration::from_secs(8))
        .await
        .expect("a body that stopped arriving does not hold its connection");
    assert!(
        after >= std::time::Duration::from_millis(1_900) && after < std::time::Duration::from_secs(5),
        "closed after {after:?}"
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"request_timeout\""), "{answer}");

    // Without a valid credential the body is never read: 401 at once, not 408 after waiting on
    // it (nor 8 MiB read and parsed for a stranger).
    let mut stranger = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    let head = "POST /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"manifest\"";
    let started = std::time::Instant::now();
    stranger.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n") {
        let mut buf = [0u8; 1024];
        let read = tokio::time::timeout(std::time::Duration::from_secs(8), stranger.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(read > 0, "closed unanswered");
        answer.extend_from_slice(&buf[..read]);
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1_500),
        "answered after {:?}, before the body could time out",
        started.elapsed()
    );
}

/// With the default settings a public artifact's Sigstore bundle is verified at publish: an
/// empty bundle and a real one over another payload (a staging fixture, whose certificate does
/// not chain to the production root either) are both refused, and nothing is stored.
#[tokio::test]
async fn a_public_artifact_whose_sigstore_bundle_does_not_verify_is_refused() {
    let registry = Registry::spawn_verifying("sigstore_verified", svc_tests::Backend::Sqlite, Path::new(""))
        .await
        .expect("SQLite always runs");
    let globex = registry.mint("globex", false);
    let empty = sigstore_publish("@globex", "dates", "2.0.0", GADGET_JS);
    let mut real = empty.clone();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sigstore/bundle_v3.txt.sigstore"
    ))
    .expect("the Sigstore fixture");
    real["signature"]["sigstoreBundle"] = serde_json::from_str(&fixture).unwrap();
    for body in [empty, real] {
        let (status, answer) = registry.post("/publish", Some(&globex), &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["error"], "bad_signature", "{answer}");
    }
    let (status, _) = registry.get("/pkg/@globex/dates/2.0.0", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a refused publish stores nothing");
}

/// Against the staging trusted root (the fixtures' own) every fixture is refused at publish with
/// its reason: three must-fail fixtures for their own defect, the rest because a registry payload
/// (sha384 of the bundle, or the canonical manifest) is not the file they sign. (The CVE fixture's
/// own defect, over its own file, is seen through `svc verify`, the same code, in registry_cli.rs.)
#[tokio::test]
async fn every_sigstore_fixture_is_refused_at_publish() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sigstore");
    let registry = Registry::spawn_verifying(
        "sigstore_fixtures",
        svc_tests::Backend::Sqlite,
        &fixtures.join("staging-trusted_root.json"),
    )
    .await
    .expect("SQLite always runs");
    let globex = registry.mint("globex", false);
    const NOT_THIS_PAYLOAD: &str = "artifact mismatch: message digest in bundle does not match artifact hash";
    let rows = [
        ("bundle_cve_2022_36056.txt.sigstore", NOT_THIS_PAYLOAD),
        ("bundle_no_log_entry.txt.sigstore", "must have an inclusion promise"),
        ("bundle_invalid_version.txt.sigstore", "Invalid media type"),
        ("bundle_v3_no_signed_time.txt.sigstore.json", "no verified timestamp"),
        ("bundle.txt.sigstore", NOT_THIS_PAYLOAD),
        ("bundle_v3.txt.sigstore", NOT_THIS_PAYLOAD),
    ];
    for (fixture, reason) in rows {
        let mut body = sigstore_publish("@globex", "dates", "2.0.0", GADGET_JS);
        let bundle = std::fs::read_to_string(fixtures.join(fixture)).expect("the Sigstore fixture");
        body["signature"]["sigstoreBundle"] = serde_json::from_str(&bundle).unwrap();
        let (status, answer) = registry.post("/publish", Some(&globex), &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fixture}: {answer}");
        assert_eq!(answer["error"], "bad_signature", "{fixture}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the Sigstore bundle does not verify: ") && message.contains(reason),
            "{fixture}: expected {reason:?} in {message}"
        );
    }
    let (status, _) = registry.get("/pkg/@globex/dates/2.0.0", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a refused publish stores nothing");
}

/// Past `[connections] max_connections` the registry still answers `GET /health` on its headroom,
/// and anything else its own 503 `overloaded` (docs/registry.md).
#[tokio::test]
async fn past_its_connection_cap_the_registry_answers_health_and_overloaded() {
    use tokio::io::AsyncWriteExt;

    let registry = RegistryProcess::start(Some(
        "[connections]\nmax_connections = 1\nhealth_headroom = 4\nidle_timeout_seconds = 30\n",
    ));
    // The one slot, held open by a connection that has been answered once.
    let mut held = tokio::net::TcpStream::connect(registry.address()).await.unwrap();
    held.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 12];
    tokio::io::AsyncReadExt::read_exact(&mut held, &mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");

    let fresh = || reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let health = fresh().get(format!("{}/health", registry.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let refused = fresh().get(format!("{}/whoami", registry.base)).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "overloaded", "{body}");
    drop(held);
}
