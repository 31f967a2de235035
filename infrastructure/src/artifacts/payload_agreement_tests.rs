//! What a signature covers is computed twice: by the CLI with `svc_attest::payload` (`svc publish`,
//! `--print-payload`, `svc install`) and by the registry with `ArtifactManifest::signed_payload`
//! (publish's Ed25519 and Sigstore checks). These tests hold the two to one answer, for both kinds
//! and both algorithms, over the manifest exactly as `svc publish` sends it.

use serde_json::{Value, json};
use svc_attest::{ed25519, payload};
use svc_domain::artifact::{ArtifactManifest, BundleDigest};

use super::publish::{Signer, keyless_payload, request};

const GADGET_JS: &[u8] = b"export function useChart() { return 1; }\n";
const CARD_TSX: &[u8] = b"export default function Card() { return null; }\n";

fn manifest(kind: &str, visibility: &str) -> Value {
    let mut manifest = json!({ "kind": kind, "scope": "@acme", "name": "chart", "version": "1.2.3+build.7",
                               "visibility": visibility, "description": "Charts \u{e9}\u{2028}", "tags": ["viz"] });
    manifest[kind] = match kind {
        "gadget" => json!({ "exports": [{ "hook": "useChart", "description": "d", "usage": "u", "example": "e" }] }),
        _ => json!({ "contract": { "propsSpec": { "type": "object" } }, "entryPoint": "index.tsx",
                     "fixtureProps": { "ratio": 0.1, "big": 1e21, "n": 1.0, "z": null, "a": [true] } }),
    };
    manifest
}

/// The registry's payload for a manifest it accepted.
fn registry_payload(manifest: &Value, bundle: &[u8]) -> Vec<u8> {
    ArtifactManifest::parse(manifest)
        .expect("the manifest svc publish sends passes the registry's schema")
        .signed_payload(&BundleDigest::of(bundle))
}

#[test]
fn svc_attest_and_the_registry_compute_the_same_payload() {
    let key = ed25519::generate();
    for (kind, bundle) in [("gadget", GADGET_JS), ("blueprint", CARD_TSX)] {
        let signers = [
            ("private", Signer::Ed25519(&key)),
            ("public", Signer::Sigstore(json!({ "mediaType": "bundle" }))),
        ];
        for (visibility, signer) in signers {
            let sent = request(&manifest(kind, visibility), bundle, &signer).unwrap();
            let expected = registry_payload(&sent.manifest, bundle);
            let attest = payload::signed_payload(kind, &sent.manifest, bundle).unwrap();
            assert_eq!(attest, expected, "{kind} {visibility}");
            match signer {
                Signer::Ed25519(key) => {
                    // What the registry's Ed25519 check verifies is what svc publish signed.
                    let value = sent.signature.value.as_deref().unwrap();
                    ed25519::verify(&key.verifying_key(), &expected, value).unwrap();
                }
                Signer::Sigstore(_) => {
                    // What `--print-payload` hands to cosign is what the registry's Sigstore check
                    // verifies the bundle over.
                    assert_eq!(
                        keyless_payload(&manifest(kind, visibility), bundle).unwrap(),
                        expected,
                        "{kind}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_gadget_payload_is_the_48_bytes_of_sha384_and_a_blueprint_payload_its_canonical_manifest() {
    let gadget = request(&manifest("gadget", "public"), GADGET_JS, &Signer::Sigstore(json!({}))).unwrap();
    let signed = registry_payload(&gadget.manifest, GADGET_JS);
    assert_eq!(signed, payload::sha384(GADGET_JS).to_vec());
    assert_eq!(signed.len(), 48);

    let blueprint = request(&manifest("blueprint", "public"), CARD_TSX, &Signer::Sigstore(json!({}))).unwrap();
    let signed = registry_payload(&blueprint.manifest, CARD_TSX);
    assert_eq!(signed, payload::blueprint_payload(&blueprint.manifest).unwrap());
    assert_ne!(signed, CARD_TSX);
}
