//! What a signature covers. One place for the rule, used by the CLI when it signs and installs
//! and by the registry when it accepts a publish.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sha2::{Digest, Sha384};

/// The prefix of a subresource-integrity digest.
const SRI_PREFIX: &str = "sha384-";

/// sha384 of `bytes`.
pub fn sha384(bytes: &[u8]) -> [u8; 48] {
    Sha384::digest(bytes).into()
}

/// `sha384-<base64(sha384(bytes))>`: the manifest's `signature.bundleSha384` and a gadget's
/// `bundleSri`.
pub fn bundle_sha384(bytes: &[u8]) -> String {
    format!("{SRI_PREFIX}{}", STANDARD.encode(sha384(bytes)))
}

/// Whether `bytes` hash to the `sha384-<base64>` value `expected` (leg one of an install).
pub fn matches_bundle_sha384(bytes: &[u8], expected: &str) -> bool {
    // Both are public values; a plain comparison leaks nothing worth a constant-time one.
    bundle_sha384(bytes) == expected
}

/// A gadget's signature covers the 48 raw bytes of sha384 of its compiled bundle.
pub fn gadget_payload(bundle: &[u8]) -> Vec<u8> {
    sha384(bundle).to_vec()
}

/// A blueprint's signature covers the RFC 8785 canonical JSON of its manifest.
pub fn blueprint_payload(manifest: &Value) -> Result<Vec<u8>, PayloadError> {
    serde_json_canonicalizer::to_vec(manifest).map_err(|e| PayloadError::Canonical(e.to_string()))
}

/// The payload for a manifest of `kind` (`gadget` or `blueprint`) and its bundle bytes.
pub fn signed_payload(kind: &str, manifest: &Value, bundle: &[u8]) -> Result<Vec<u8>, PayloadError> {
    match kind {
        "gadget" => Ok(gadget_payload(bundle)),
        "blueprint" => blueprint_payload(manifest),
        other => Err(PayloadError::UnknownKind(other.to_owned())),
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    #[error("the manifest has no RFC 8785 canonical form: {0}")]
    Canonical(String),
    #[error("unknown artifact kind `{0}` (expected gadget or blueprint)")]
    UnknownKind(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bundle_sha384_is_the_sri_form_of_sha384() {
        // sha384("abc") from FIPS 180-2, appendix D.1.
        let expected = "sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn";
        assert_eq!(bundle_sha384(b"abc"), expected);
        assert!(matches_bundle_sha384(b"abc", expected));
        assert!(!matches_bundle_sha384(b"abd", expected));
    }

    #[test]
    fn a_gadget_payload_is_the_48_raw_bytes_of_sha384() {
        let payload = gadget_payload(b"export function useX() {}");
        assert_eq!(payload.len(), 48);
        assert_eq!(payload, sha384(b"export function useX() {}").to_vec());
    }

    #[test]
    fn a_blueprint_payload_is_canonical_whatever_the_key_order() {
        let a = json!({ "name": "chart", "kind": "blueprint", "n": 1.0 });
        let b = json!({ "n": 1, "kind": "blueprint", "name": "chart" });
        let payload = blueprint_payload(&a).unwrap();
        assert_eq!(payload, blueprint_payload(&b).unwrap());
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            r#"{"kind":"blueprint","n":1,"name":"chart"}"#
        );
    }

    #[test]
    fn an_unknown_kind_has_no_payload() {
        assert_eq!(
            signed_payload("theme", &json!({}), b""),
            Err(PayloadError::UnknownKind("theme".into()))
        );
    }
}
