//! `RegistryService::publish` over in-memory ports: what a Sigstore bundle is verified over, and
//! which versions count as already published.

use std::sync::Arc;

use serde_json::{Value, json};
use svc_domain::artifact::{ArtifactManifest, BundleDigest};

use super::test_ports::{MemoryArtifacts, MemoryBundles, RecordingSigstore, service, service_over};
use super::{PublishRequest, PublishSignature, RegistryError, RegistryService};
use crate::ports::registry::Publisher;

const GADGET_JS: &[u8] = b"export function useChart() { return 1; }\n";
const CARD_TSX: &[u8] = b"export default function Card() { return null; }\n";

fn acme() -> Publisher {
    Publisher {
        name: "acme".into(),
        admin: false,
    }
}

fn public_gadget(version: &str) -> Value {
    public_gadget_of(version, GADGET_JS)
}

/// [`public_gadget`] with `bundle` as its bundle.
fn public_gadget_of(version: &str, bundle: &[u8]) -> Value {
    json!({
        "kind": "gadget", "scope": "@acme", "name": "chart", "version": version, "visibility": "public",
        "signature": { "algorithm": "sigstore", "bundleSha384": BundleDigest::of(bundle).sri() },
        "gadget": { "exports": [{ "hook": "useChart", "description": "d", "usage": "u", "example": "e" }] }
    })
}

fn public_blueprint() -> Value {
    json!({
        "kind": "blueprint", "scope": "@acme", "name": "card", "version": "1.0.0", "visibility": "public",
        "signature": { "algorithm": "sigstore", "bundleSha384": BundleDigest::of(CARD_TSX).sri() },
        "blueprint": { "contract": {}, "entryPoint": "index.tsx" }
    })
}

fn keyless(manifest: &Value, bundle: &[u8]) -> PublishRequest {
    PublishRequest {
        manifest: manifest.clone(),
        bundle: Some(bundle.to_vec()),
        bundle_sha384: None,
        signature: PublishSignature {
            algorithm: "sigstore".into(),
            public_key_id: None,
            value: None,
            sigstore_bundle: Some(json!({ "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json" })),
        },
    }
}

fn registry() -> (RegistryService, Arc<RecordingSigstore>) {
    let sigstore = Arc::new(RecordingSigstore::default());
    let service = service(Arc::new(MemoryArtifacts::default()), sigstore.clone(), &["useChart"]);
    (service, sigstore)
}

/// The payload `svc publish --print-payload` prints and `svc install` verifies: sha384 of a
/// gadget's bundle (48 bytes), the canonical manifest of a blueprint; never the raw bundle.
#[tokio::test]
async fn a_sigstore_bundle_is_verified_over_the_signed_payload() {
    let (service, sigstore) = registry();
    let gadget = public_gadget("1.0.0");
    service
        .publish(Some(&acme()), keyless(&gadget, GADGET_JS))
        .await
        .unwrap();
    let blueprint = public_blueprint();
    service
        .publish(Some(&acme()), keyless(&blueprint, CARD_TSX))
        .await
        .unwrap();

    let expected = |manifest: &Value, bundle: &[u8]| {
        ArtifactManifest::parse(manifest)
            .unwrap()
            .signed_payload(&BundleDigest::of(bundle))
    };
    let payloads = sigstore.payloads();
    assert_eq!(payloads, [expected(&gadget, GADGET_JS), expected(&blueprint, CARD_TSX)]);
    assert_eq!(payloads[0].len(), 48);
    assert_eq!(payloads[0], BundleDigest::of(GADGET_JS).bytes().to_vec());
    assert_ne!(
        payloads[1], CARD_TSX,
        "a blueprint's payload is its manifest, not its source"
    );
}

/// SemVer 2.0.0 §10: `1.2.3+fix` has the precedence of `1.2.3`, so it is the same version and
/// cannot be published beside it; another patch can.
#[tokio::test]
async fn a_version_differing_only_in_build_metadata_is_already_published() {
    let (service, _) = registry();
    service
        .publish(Some(&acme()), keyless(&public_gadget("1.2.3"), GADGET_JS))
        .await
        .unwrap();
    for (version, exact) in [("1.2.3", true), ("1.2.3+fix", false), ("1.2.3+build.2", false)] {
        let refused = service
            .publish(Some(&acme()), keyless(&public_gadget(version), GADGET_JS))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "version_exists", "{version}: {refused}");
        assert_eq!(matches!(refused, RegistryError::VersionExists(_)), exact, "{version}");
        assert!(
            refused.to_string().contains("@acme/chart@1.2.3 already exists"),
            "{refused}"
        );
    }
    for version in ["1.2.4", "1.2.3-rc.1+fix"] {
        let published = service
            .publish(Some(&acme()), keyless(&public_gadget(version), GADGET_JS))
            .await;
        assert!(published.is_ok(), "{version}: {:?}", published.err());
    }
}

/// Two publishes of one release at the same moment both read the package before either is
/// stored: the store refuses the second as it writes, and the refusal names the cause the check
/// would have named.
#[tokio::test]
async fn a_twin_published_at_the_same_moment_is_refused_by_the_store() {
    let artifacts = Arc::new(MemoryArtifacts::default());
    let service = service(artifacts.clone(), Arc::new(RecordingSigstore::default()), &["useChart"]);
    service
        .publish(Some(&acme()), keyless(&public_gadget("1.2.3"), GADGET_JS))
        .await
        .unwrap();
    for (version, exact) in [("1.2.3+fix", false), ("1.2.3", true)] {
        artifacts.miss_next_read();
        let refused = service
            .publish(Some(&acme()), keyless(&public_gadget(version), GADGET_JS))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "version_exists", "{version}: {refused}");
        assert_eq!(
            matches!(refused, RegistryError::VersionExists(_)),
            exact,
            "{version}: {refused}"
        );
        assert!(
            refused.to_string().contains("@acme/chart@1.2.3 already exists"),
            "{refused}"
        );
    }
}

/// A publish the store refuses after its bundle was written (it lost the race for its version)
/// takes its bundle back: nothing refers to it. A bundle a stored version shares stays.
#[tokio::test]
async fn a_publish_refused_by_the_store_leaves_no_bundle_behind() {
    let artifacts = Arc::new(MemoryArtifacts::default());
    let bundles = Arc::new(MemoryBundles::default());
    let sigstore = Arc::new(RecordingSigstore::default());
    let service = service_over(artifacts.clone(), bundles.clone(), sigstore, &["useChart"]);
    service
        .publish(Some(&acme()), keyless(&public_gadget("1.2.3"), GADGET_JS))
        .await
        .unwrap();
    let other: &[u8] = b"export function useChart() { return 2; }\n";
    for (bundle, kept) in [(other, false), (GADGET_JS, true)] {
        artifacts.miss_next_read();
        let refused = service
            .publish(Some(&acme()), keyless(&public_gadget_of("1.2.3", bundle), bundle))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "version_exists", "{refused}");
        assert_eq!(bundles.holds(bundle), kept, "{}", String::from_utf8_lossy(bundle));
    }
}

/// A blueprint with `contract` in place of `public_blueprint`'s empty one.
fn blueprint_with(contract: Value) -> Value {
    let mut manifest = public_blueprint();
    manifest["blueprint"]["contract"] = contract;
    manifest
}

/// A contract the installing servers could not agree (they negotiate it as `svc_handshake`
/// does, and stop at start-up on one they cannot) is refused at the gate, each finding under
/// the contract's own pointer; one that negotiation only amends is published.
#[tokio::test]
async fn a_contract_the_servers_could_not_agree_is_refused_at_the_gate() {
    let (service, _) = registry();
    let declined = blueprint_with(json!({
        "propsSpec": { "type": "object",
                       "properties": { "code": { "type": "string", "pattern": "^(?!x)" } } },
        "actionSpec": { "save": "not an object" }
    }));
    let failures = service.check_conformance(&declined, Some(CARD_TSX)).await.unwrap();
    let found: Vec<(&str, &str)> = failures.iter().map(|f| (f.rule, f.path.as_str())).collect();
    assert_eq!(
        found,
        [
            ("blueprint_contract", "/manifest/blueprint/contract/propsSpec"),
            ("blueprint_contract", "/manifest/blueprint/contract/actionSpec/save"),
        ],
        "{failures:?}"
    );
    assert!(
        failures[0]
            .message
            .contains("\"^(?!x)\" at /properties/code/pattern cannot be run: look-around"),
        "{}",
        failures[0].message
    );
    let refused = service
        .publish(Some(&acme()), keyless(&declined, CARD_TSX))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "conformance_failed", "{refused}");

    let amended = blueprint_with(json!({ "propsSpec": { "properties": {} }, "colour": "red" }));
    let published = service.publish(Some(&acme()), keyless(&amended, CARD_TSX)).await;
    assert!(published.is_ok(), "{:?}", published.err());
}

/// A blueprint's `contract` and `fixtureProps` are JSON Schema `object`s of any size; the
/// registry bounds them (docs/registry.md, "Limits"): one byte over is refused at publish as
/// `invalid_manifest` at the part's pointer, and listed by the conformance check.
#[tokio::test]
async fn an_oversized_contract_or_fixture_is_refused_before_the_gate() {
    let (service, _) = registry();
    let filler = |bytes: usize| {
        // `{"x":"…"}` is 8 bytes beside the text.
        json!({ "x": "a".repeat(bytes - 8) })
    };
    for (part, max) in [("contract", 256 * 1024), ("fixtureProps", 256 * 1024)] {
        let mut manifest = public_blueprint();
        manifest["blueprint"][part] = filler(max + 1);
        let refused = service
            .publish(Some(&acme()), keyless(&manifest, CARD_TSX))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "invalid_manifest", "{part}: {refused}");
        let failure = &refused.failures()[0];
        assert_eq!(
            (failure.rule, failure.path.as_str(), failure.message.as_str()),
            (
                "manifest_schema",
                format!("/manifest/blueprint/{part}").as_str(),
                format!("`blueprint.{part}` is more than {max} bytes of JSON").as_str()
            )
        );
        let listed = service.check_conformance(&manifest, Some(CARD_TSX)).await.unwrap();
        assert_eq!(listed, refused.failures(), "{part}");
    }
    // At the limit, it is not refused for its size.
    let mut manifest = public_blueprint();
    manifest["blueprint"]["fixtureProps"] = filler(256 * 1024);
    let failures = service.check_conformance(&manifest, Some(CARD_TSX)).await.unwrap();
    assert!(
        failures.iter().all(|f| !f.message.contains("bytes of JSON")),
        "{failures:?}"
    );
}

/// A package holds at most `MAX_VERSIONS_PER_PACKAGE` versions, yanked ones included: the next
/// publish is 403 `quota_exceeded`, and nothing is stored.
#[tokio::test]
async fn a_package_at_its_version_quota_takes_no_more() {
    use crate::ports::registry::ArtifactRepository;
    use svc_domain::artifact::{ArtifactVersion, PublishArtifact, StoredSignature};

    let artifacts = Arc::new(MemoryArtifacts::default());
    let service = service(artifacts.clone(), Arc::new(RecordingSigstore::default()), &["useChart"]);
    let stored = service
        .publish(Some(&acme()), keyless(&public_gadget("0.0.1"), GADGET_JS))
        .await
        .unwrap()
        .version;
    for patch in 2..=super::MAX_VERSIONS_PER_PACKAGE {
        let manifest = public_gadget(&format!("0.0.{patch}"));
        let parsed = ArtifactManifest::parse(&manifest).unwrap();
        let version = ArtifactVersion::publish(
            PublishArtifact {
                identity: parsed.identity,
                kind: parsed.kind,
                visibility: parsed.visibility,
                publisher: "acme".into(),
                manifest,
                author_public_key: None,
                signature: StoredSignature {
                    ..stored.signature.clone()
                },
                bundle_sri: stored.bundle_sri.clone(),
            },
            stored.published_at,
        )
        .unwrap();
        let outcome = artifacts
            .publish(&version, 1, super::DEFAULT_PUBLISH_QUOTA)
            .await
            .unwrap();
        assert_eq!(outcome, crate::ports::registry::PublishOutcome::Published);
    }
    let refused = service
        .publish(Some(&acme()), keyless(&public_gadget("1.0.0"), GADGET_JS))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "quota_exceeded", "{refused}");
    assert_eq!(
        refused.to_string(),
        "@acme/chart holds 1000 versions, the most a package may hold; publish under another name"
    );
    // Another package of the same publisher is not held by it.
    let mut other = public_gadget("1.0.0");
    other["name"] = json!("table");
    service
        .publish(Some(&acme()), keyless(&other, GADGET_JS))
        .await
        .unwrap();
}

/// A schema failure names its instance in an excerpt, never whole: a manifest that is a large
/// array is refused in a short answer, at publish and by the check alike.
#[tokio::test]
async fn a_schema_failure_excerpts_the_instance_it_names() {
    let (service, _) = registry();
    let manifest = Value::Array(vec![json!(0); 100_000]);
    let refused = service
        .publish(Some(&acme()), keyless(&manifest, GADGET_JS))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "invalid_manifest");
    let listed = service.check_conformance(&manifest, None).await.unwrap();
    assert_eq!(refused.failures(), listed);
    for failure in &listed {
        assert!(
            failure.message.chars().count() <= 512,
            "{} characters",
            failure.message.chars().count()
        );
    }
    let not_an_object = listed
        .iter()
        .find(|f| f.message.ends_with("is not of type \"object\""))
        .expect("the type failure is listed");
    assert!(
        not_an_object.message.starts_with("[0,0,0,"),
        "{}",
        not_an_object.message
    );
    assert!(not_an_object.message.contains(" … "), "{}", not_an_object.message);
}
