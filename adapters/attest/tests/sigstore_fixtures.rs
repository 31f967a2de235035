//! Every case of tests/fixtures/sigstore (real bundles from the Sigstore staging instance, see its
//! README) with its expected outcome, plus a one-byte-tampered artifact and a wrong identity pin
//! (email, issuer) for each verifying bundle.

use std::path::PathBuf;

use svc_attest::sigstore::{IdentityPin, SigstoreError, TrustedRoot, verify};

const GITHUB: &str = "https://github.com/login/oauth";

fn fixture(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sigstore");
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn staging() -> TrustedRoot {
    TrustedRoot::from_json(std::str::from_utf8(&fixture("staging-trusted_root.json")).unwrap()).unwrap()
}

fn check(artifact: &[u8], bundle: &str, root: &TrustedRoot, pin: Option<&IdentityPin>) -> Result<(), SigstoreError> {
    let bundle = String::from_utf8(fixture(bundle)).unwrap();
    verify(artifact, &bundle, root, pin)
}

fn pin(identity: &str, issuer: &str) -> IdentityPin {
    IdentityPin {
        identity: identity.into(),
        issuer: issuer.into(),
    }
}

fn tampered(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes[0] ^= 0x01;
    bytes
}

/// The two verifying cases: (artifact, bundle, identity).
const VERIFYING: [(&str, &str, &str); 2] = [
    ("bundle.txt", "bundle.txt.sigstore", "a@tny.town"),
    ("bundle_v3.txt", "bundle_v3.txt.sigstore", "william@yossarian.net"),
];

#[test]
fn the_v01_and_v03_bundles_verify_with_and_without_their_identity_pin() {
    for (artifact, bundle, identity) in VERIFYING {
        let bytes = fixture(artifact);
        check(&bytes, bundle, &staging(), None).unwrap_or_else(|e| panic!("{bundle}: {e}"));
        check(&bytes, bundle, &staging(), Some(&pin(identity, GITHUB)))
            .unwrap_or_else(|e| panic!("{bundle} pinned: {e}"));
    }
}

#[test]
fn a_one_byte_tampered_artifact_fails() {
    for (artifact, bundle, _) in VERIFYING {
        let err = check(&tampered(fixture(artifact)), bundle, &staging(), None).unwrap_err();
        assert_eq!(
            err,
            SigstoreError::Rejected("artifact mismatch: message digest in bundle does not match artifact hash".into()),
            "{bundle}"
        );
    }
}

#[test]
fn a_wrong_identity_or_issuer_pin_fails() {
    for (artifact, bundle, identity) in VERIFYING {
        let bytes = fixture(artifact);
        let err = check(&bytes, bundle, &staging(), Some(&pin("someone@example.com", GITHUB))).unwrap_err();
        assert_eq!(
            err,
            SigstoreError::Rejected(format!(
                "identity mismatch: expected someone@example.com, got {identity}"
            )),
            "{bundle}"
        );
        let err = check(
            &bytes,
            bundle,
            &staging(),
            Some(&pin(identity, "https://accounts.google.com")),
        )
        .unwrap_err();
        assert_eq!(
            err,
            SigstoreError::Rejected(format!(
                "issuer mismatch: expected https://accounts.google.com, got {GITHUB}"
            )),
            "{bundle}"
        );
    }
}

#[test]
fn the_production_root_does_not_trust_staging_bundles() {
    let err = check(
        &fixture("bundle.txt"),
        "bundle.txt.sigstore",
        &TrustedRoot::production(),
        None,
    )
    .unwrap_err();
    // The staging log's key is not in the production root, so the entry's promise cannot verify.
    assert!(
        matches!(&err, SigstoreError::Rejected(m) if m.starts_with("invalid inclusion promise: No log key valid")),
        "{err}"
    );
}

#[test]
fn a_log_entry_inconsistent_with_the_other_materials_fails() {
    let err = check(
        &fixture("bundle_cve_2022_36056.txt"),
        "bundle_cve_2022_36056.txt.sigstore",
        &staging(),
        None,
    )
    .unwrap_err();
    assert_eq!(
        err,
        SigstoreError::Rejected(
            "log entry does not match the bundle: certificate in bundle does not match certificate in Rekor entry"
                .into()
        )
    );
}

#[test]
fn a_bundle_without_a_log_entry_fails() {
    let err = check(
        &fixture("bundle_no_log_entry.txt"),
        "bundle_no_log_entry.txt.sigstore",
        &staging(),
        None,
    )
    .unwrap_err();
    assert_eq!(
        err,
        SigstoreError::Rejected(
            "Bundle error: application/vnd.dev.sigstore.bundle+json;version=0.1 bundles must have an inclusion promise"
                .into()
        )
    );
}

#[test]
fn an_unsupported_bundle_version_fails() {
    let err = check(
        &fixture("bundle_invalid_version.txt"),
        "bundle_invalid_version.txt.sigstore",
        &staging(),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&err, SigstoreError::Malformed(m) if m.contains("Invalid media type: this is completely wrong")),
        "{err}"
    );
}

#[test]
fn a_bundle_without_a_signed_time_fails() {
    let err = check(
        &fixture("bundle_v3_no_signed_time.txt"),
        "bundle_v3_no_signed_time.txt.sigstore.json",
        &staging(),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&err, SigstoreError::Rejected(m) if m.starts_with("no verified timestamp")),
        "{err}"
    );
}

#[test]
fn a_forged_signed_entry_timestamp_fails() {
    // Same bundle, SET replaced by the one of another entry of the same log.
    let v3: serde_json::Value = serde_json::from_slice(&fixture("bundle_v3.txt.sigstore")).unwrap();
    let v01: serde_json::Value = serde_json::from_slice(&fixture("bundle.txt.sigstore")).unwrap();
    let mut forged = v3.clone();
    forged["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"] =
        v01["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"].clone();
    let err = verify(&fixture("bundle_v3.txt"), &forged.to_string(), &staging(), None).unwrap_err();
    assert!(
        matches!(&err, SigstoreError::Rejected(m) if m.starts_with("invalid inclusion promise")),
        "{err}"
    );
}

#[test]
fn a_trusted_root_that_is_not_one_is_refused() {
    assert!(TrustedRoot::from_json("{}").is_err());
    assert!(TrustedRoot::from_json("not json").is_err());
}
