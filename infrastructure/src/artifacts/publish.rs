//! What `svc publish` sends: the author's manifest completed with its signature metadata, the
//! bundle, and the signature over the payload (Ed25519 with the author key, or a Sigstore bundle
//! made where the OIDC identity lives).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use svc_attest::ed25519::{self, AuthorSigningKey};
use svc_attest::payload::{self, PayloadError};
use svc_attest::sigstore;

use crate::registry_client::wire::{PublishRequest, WireSignature};

/// How the artifact is signed.
pub enum Signer<'a> {
    Ed25519(&'a AuthorSigningKey),
    /// A Sigstore bundle (JSON) over the payload [`keyless_payload`] gives.
    Sigstore(Value),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PublishError {
    #[error("the manifest must be a JSON object with `kind` gadget or blueprint")]
    NotAManifest,
    #[error(transparent)]
    Payload(#[from] PayloadError),
}

/// The manifest with `signature` (and `authorPublicKey` for Ed25519) filled in: what is signed
/// for a blueprint and what is sent.
pub fn complete_manifest(manifest: &Value, bundle: &[u8], signer: &Signer<'_>) -> Result<Value, PublishError> {
    let mut manifest = manifest.clone();
    let object = manifest.as_object_mut().ok_or(PublishError::NotAManifest)?;
    let bundle_sha384 = payload::bundle_sha384(bundle);
    match signer {
        Signer::Ed25519(key) => {
            let public = key.verifying_key();
            object.insert(
                "signature".into(),
                json!({
                    "algorithm": ed25519::ALGORITHM,
                    "publicKeyId": ed25519::public_key_id(&public),
                    "bundleSha384": bundle_sha384,
                }),
            );
            object.insert("authorPublicKey".into(), json!(ed25519::encode_public_key(&public)));
        }
        Signer::Sigstore(_) => {
            object.insert(
                "signature".into(),
                json!({ "algorithm": sigstore::ALGORITHM, "bundleSha384": bundle_sha384 }),
            );
            object.remove("authorPublicKey");
        }
    }
    Ok(manifest)
}

/// The exact bytes the signature must cover, for `--print-payload` (to sign with cosign).
fn payload_to_sign(manifest: &Value, bundle: &[u8], signer: &Signer<'_>) -> Result<Vec<u8>, PublishError> {
    let completed = complete_manifest(manifest, bundle, signer)?;
    let kind = completed
        .get("kind")
        .and_then(Value::as_str)
        .ok_or(PublishError::NotAManifest)?;
    Ok(payload::signed_payload(kind, &completed, bundle)?)
}

/// The bytes a keyless (Sigstore) signature must cover: what `cosign sign-blob --bundle` signs
/// before the bundle it makes is sent with [`Signer::Sigstore`]. The payload does not depend on
/// that bundle, so none is needed yet.
pub fn keyless_payload(manifest: &Value, bundle: &[u8]) -> Result<Vec<u8>, PublishError> {
    payload_to_sign(manifest, bundle, &Signer::Sigstore(Value::Null))
}

/// The `POST /publish` body.
pub fn request(manifest: &Value, bundle: &[u8], signer: &Signer<'_>) -> Result<PublishRequest, PublishError> {
    let completed = complete_manifest(manifest, bundle, signer)?;
    let kind = completed
        .get("kind")
        .and_then(Value::as_str)
        .ok_or(PublishError::NotAManifest)?;
    let signed = payload::signed_payload(kind, &completed, bundle)?;
    let signature = match signer {
        Signer::Ed25519(key) => WireSignature {
            algorithm: ed25519::ALGORITHM.into(),
            public_key_id: Some(ed25519::public_key_id(&key.verifying_key())),
            value: Some(ed25519::sign(key, &signed)),
            sigstore_bundle: None,
        },
        Signer::Sigstore(bundle) => WireSignature {
            algorithm: sigstore::ALGORITHM.into(),
            public_key_id: None,
            value: None,
            sigstore_bundle: Some(bundle.clone()),
        },
    };
    Ok(PublishRequest {
        bundle_sha384: Some(payload::bundle_sha384(bundle)),
        bundle: Some(STANDARD.encode(bundle)),
        manifest: completed,
        signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyless_payload_is_what_a_sigstore_publish_is_checked_against() {
        let blueprint = json!({ "kind": "blueprint", "scope": "@acme", "name": "card", "version": "1.0.0",
                                "visibility": "public", "authorPublicKey": "left over from an Ed25519 draft",
                                "blueprint": { "contract": {} } });
        let source = b"export default function Card() { return null; }";
        let printed = keyless_payload(&blueprint, source).unwrap();
        let sent = request(&blueprint, source, &Signer::Sigstore(json!({ "mediaType": "bundle" }))).unwrap();
        assert_eq!(
            printed,
            payload::signed_payload("blueprint", &sent.manifest, source).unwrap()
        );
        assert_eq!(sent.manifest["signature"]["algorithm"], sigstore::ALGORITHM);
        // An Ed25519 payload names its key: it is not the keyless one.
        let key = ed25519::generate();
        assert_ne!(
            printed,
            payload_to_sign(&blueprint, source, &Signer::Ed25519(&key)).unwrap()
        );
    }

    fn gadget() -> Value {
        json!({ "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.2.3", "visibility": "private",
                "gadget": { "exports": [{ "hook": "useChart" }] } })
    }

    #[test]
    fn an_ed25519_gadget_publish_signs_sha384_of_the_bundle_with_the_key_it_names() {
        let key = ed25519::generate();
        let body = request(&gadget(), b"export const useChart = 1;", &Signer::Ed25519(&key)).unwrap();
        let id = ed25519::public_key_id(&key.verifying_key());
        assert_eq!(body.manifest["signature"]["publicKeyId"], json!(id));
        assert_eq!(body.signature.public_key_id.as_deref(), Some(id.as_str()));
        assert_eq!(
            body.manifest["signature"]["bundleSha384"],
            json!(payload::bundle_sha384(b"export const useChart = 1;"))
        );
        let public = ed25519::decode_public_key(body.manifest["authorPublicKey"].as_str().unwrap()).unwrap();
        ed25519::verify(
            &public,
            &payload::gadget_payload(b"export const useChart = 1;"),
            body.signature.value.as_deref().unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn a_blueprint_publish_signs_the_canonical_completed_manifest() {
        let key = ed25519::generate();
        let manifest = json!({ "kind": "blueprint", "scope": "@acme", "name": "card", "version": "1.0.0",
                               "blueprint": { "entryPoint": "index.tsx" } });
        let body = request(&manifest, b"export default () => null;", &Signer::Ed25519(&key)).unwrap();
        let signed = payload::blueprint_payload(&body.manifest).unwrap();
        ed25519::verify(&key.verifying_key(), &signed, body.signature.value.as_deref().unwrap()).unwrap();
        assert_eq!(
            payload_to_sign(&manifest, b"export default () => null;", &Signer::Ed25519(&key)).unwrap(),
            signed
        );
    }

    #[test]
    fn a_sigstore_publish_carries_the_bundle_and_no_author_key() {
        let body = request(&gadget(), b"x", &Signer::Sigstore(json!({ "mediaType": "m" }))).unwrap();
        assert_eq!(body.signature.algorithm, "sigstore");
        assert_eq!(body.signature.sigstore_bundle, Some(json!({ "mediaType": "m" })));
        assert!(body.manifest.get("authorPublicKey").is_none());
        assert_eq!(body.manifest["signature"]["algorithm"], json!("sigstore"));
    }

    #[test]
    fn a_manifest_that_is_not_an_object_or_of_no_known_kind_is_refused() {
        let key = ed25519::generate();
        assert_eq!(
            request(&json!([1]), b"x", &Signer::Ed25519(&key)).unwrap_err(),
            PublishError::NotAManifest
        );
        assert_eq!(
            request(&json!({ "kind": "theme" }), b"x", &Signer::Ed25519(&key)).unwrap_err(),
            PublishError::Payload(PayloadError::UnknownKind("theme".into()))
        );
    }
}
