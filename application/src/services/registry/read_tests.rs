//! The registry's reads over in-memory ports: a search and a version listing answer from the
//! listing columns, and never read a whole version (its manifest may be megabytes).

use std::sync::Arc;

use serde_json::{Value, json};
use svc_domain::artifact::{
    ArtifactManifest, ArtifactVersion, BundleDigest, PublishArtifact, SignatureAlgorithm, StoredSignature, Visibility,
};

use super::test_ports::{MemoryArtifacts, RecordingSigstore, service};
use super::{RegistryError, SearchQuery};
use crate::ports::registry::{ArtifactRepository, Publisher};

const GADGET_JS: &[u8] = b"export function useChart() { return 1; }\n";

fn acme() -> Publisher {
    Publisher {
        name: "acme".into(),
        admin: false,
    }
}

fn signature(visibility: &str) -> Value {
    match visibility {
        "private" => json!({
            "algorithm": "ed25519", "publicKeyId": "abcdefghijklmnop",
            "bundleSha384": BundleDigest::of(GADGET_JS).sri()
        }),
        _ => json!({ "algorithm": "sigstore", "bundleSha384": BundleDigest::of(GADGET_JS).sri() }),
    }
}

fn gadget(name: &str, visibility: &str) -> Value {
    let mut manifest = json!({
        "kind": "gadget", "scope": "@acme", "name": name, "version": "1.0.0", "visibility": visibility,
        "description": format!("The {name} gadget"), "tags": ["chart"],
        "signature": signature(visibility),
        "gadget": { "exports": [{ "hook": "useChart", "description": "d", "usage": "u", "example": "e" }] }
    });
    if visibility == "private" {
        manifest["authorPublicKey"] = json!("A".repeat(43) + "=");
    }
    manifest
}

/// A stored version of `manifest`, as publish stores it.
fn stored(manifest: Value) -> ArtifactVersion {
    let parsed = ArtifactManifest::parse(&manifest).unwrap();
    let signature = match parsed.visibility {
        Visibility::Public => StoredSignature {
            algorithm: SignatureAlgorithm::Sigstore,
            public_key_id: None,
            value: None,
            sigstore_bundle: Some(json!({})),
        },
        Visibility::Private => StoredSignature {
            algorithm: SignatureAlgorithm::Ed25519,
            public_key_id: Some("abcdefghijklmnop".into()),
            value: Some("c2ln".into()),
            sigstore_bundle: None,
        },
    };
    ArtifactVersion::publish(
        PublishArtifact {
            identity: parsed.identity,
            kind: parsed.kind,
            visibility: parsed.visibility,
            publisher: "acme".into(),
            manifest,
            author_public_key: (parsed.visibility == Visibility::Private).then(|| "A".repeat(43) + "="),
            signature,
            bundle_sri: BundleDigest::of(GADGET_JS).sri(),
        },
        chrono::DateTime::UNIX_EPOCH,
    )
    .unwrap()
}

/// A registry holding `@acme/<name>@1.0.0` for each (name, visibility).
async fn registry_with(packages: &[(&str, &str)]) -> (super::RegistryService, Arc<MemoryArtifacts>) {
    let artifacts = Arc::new(MemoryArtifacts::default());
    let service = service(artifacts.clone(), Arc::new(RecordingSigstore::default()), &["useChart"]);
    for (name, visibility) in packages {
        let version = stored(gadget(name, visibility));
        artifacts
            .publish(&version, 1, super::DEFAULT_PUBLISH_QUOTA)
            .await
            .unwrap();
    }
    (service, artifacts)
}

#[tokio::test]
async fn a_search_answers_from_the_listing_without_reading_a_manifest() {
    let (service, artifacts) = registry_with(&[("chart", "public"), ("table", "private")]).await;
    let before = artifacts.reads();
    let query = SearchQuery {
        q: Some("GADGET".into()),
        tag: Some("chart".into()),
        hook: Some("useChart".into()),
        ..SearchQuery::default()
    };
    let hits = service.search(Some(&acme()), query).await.unwrap();
    let shown: Vec<(&str, &str, &str, &[String])> = hits
        .iter()
        .map(|h| {
            (
                h.name.as_str(),
                h.latest_version.as_str(),
                h.description.as_str(),
                h.tags.as_slice(),
            )
        })
        .collect();
    let chart = ["chart".to_owned()];
    assert_eq!(
        shown,
        [
            ("chart", "1.0.0", "The chart gadget", &chart[..]),
            ("table", "1.0.0", "The table gadget", &chart[..])
        ]
    );
    assert_eq!(artifacts.reads() - before, 0, "no whole version was read");
    // Without a credential the private package is not answered.
    let anonymous = service.search(None, SearchQuery::default()).await.unwrap();
    assert_eq!(anonymous.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["chart"]);
}

#[tokio::test]
async fn an_anonymous_listing_of_a_private_package_reads_no_version() {
    let (service, artifacts) = registry_with(&[("table", "private")]).await;
    let before = artifacts.reads();
    let refused = service.versions(None, "@acme", "table").await.unwrap_err();
    assert!(matches!(refused, RegistryError::Unauthorized), "{refused}");
    assert_eq!(artifacts.reads() - before, 0, "no whole version was read");
    let listed = service
        .versions(Some(&acme()), "@acme", "table")
        .await
        .unwrap()
        .versions;
    assert_eq!(listed.iter().map(|v| v.version.as_str()).collect::<Vec<_>>(), ["1.0.0"]);
    assert_eq!(artifacts.reads() - before, 0, "no whole version was read");
}
