//! Signatures at publish: tampered bundles, unknown and mismatched keys, key rotation, and Sigstore
//! bundles that do not verify.

use crate::registry_support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use registry_support::*;
use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_attest::{ed25519, payload};

crate::on_every_registry_backend!(
    tampered_bundles_and_wrong_keys_are_refused,
    a_rotated_key_leaves_old_versions_verifiable,
);

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
/// own defect, over its own file, is seen through `svc verify`, the same code, in
/// registry_cli/verify.rs.)
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
