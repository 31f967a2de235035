//! Install's local side over files in a temporary project: both verification legs, the svc.json
//! edits, the blueprint directory, and that a failure leaves the project exactly as it was.

use std::path::Path;

use serde_json::{Value, json};
use svc_attest::ed25519::{self, AuthorSigningKey};
use svc_attest::payload;
use svc_attest::sigstore::{IdentityPin, TrustedRoot};

use super::install::{InstallError, Installed, place_blueprint, write};
use super::project::{INSTALLED_BLUEPRINTS_GLOB, Project, ProjectError};
use super::verify::{Fetched, Requested, Trust, TrustPolicy, VerifyError, verify};
use crate::registry_client::wire::{PackageVersion, WireSignature};
use svc_attest::ed25519::Ed25519Error;

const GADGET_JS: &[u8] = b"export function useChart() { return 1; }";
const BLUEPRINT_TSX: &[u8] = b"export default function Card() { return <div/>; }";

fn gadget_manifest(key: &AuthorSigningKey, bundle: &[u8]) -> Value {
    json!({
        "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.2.3", "visibility": "private",
        "description": "charts", "tags": ["viz"],
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&key.verifying_key()),
                       "bundleSha384": payload::bundle_sha384(bundle) },
        "authorPublicKey": ed25519::encode_public_key(&key.verifying_key()),
        "gadget": { "exports": [{ "hook": "useChart", "description": "a chart", "usage": "useChart()", "example": "const c = useChart();" }] }
    })
}

fn blueprint_manifest(key: &AuthorSigningKey, bundle: &[u8]) -> Value {
    json!({
        "kind": "blueprint", "scope": "@acme", "name": "card", "version": "2.0.0+build.7", "visibility": "private",
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&key.verifying_key()),
                       "bundleSha384": payload::bundle_sha384(bundle) },
        "blueprint": { "contract": { "propsSpec": { "type": "object" } }, "entryPoint": "index.tsx", "fixtureProps": {} }
    })
}

/// A version as the registry serves it, signed by `key` and pinned to it.
fn fetched(manifest: Value, bundle: &[u8], key: &AuthorSigningKey) -> Fetched {
    let kind = manifest["kind"].as_str().unwrap().to_owned();
    let signed = payload::signed_payload(&kind, &manifest, bundle).unwrap();
    Fetched {
        version: PackageVersion {
            bundle_url: "https://reg.example/bundles/sha384/abc".into(),
            bundle_sri: payload::bundle_sha384(bundle),
            signature: WireSignature {
                algorithm: "ed25519".into(),
                public_key_id: manifest["signature"]["publicKeyId"].as_str().map(str::to_owned),
                value: Some(ed25519::sign(key, &signed)),
                sigstore_bundle: None,
            },
            author_public_key: Some(ed25519::encode_public_key(&key.verifying_key())),
            published_at: "2026-11-26T00:00:00Z".into(),
            manifest,
        },
        bundle: bundle.to_vec(),
    }
}

fn policy(strict: bool) -> TrustPolicy {
    TrustPolicy {
        strict,
        trusted_root: TrustedRoot::production(),
        identity: None,
    }
}

fn requested(raw: &str) -> Requested {
    raw.parse().unwrap()
}

/// Every file under `dir` with its bytes, to compare a project before and after.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.push((path.strip_prefix(dir).unwrap().display().to_string() + "/", Vec::new()));
                stack.push(path);
            } else {
                files.push((
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    files
}

fn project_with(svc_json: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("svc.json"), svc_json).unwrap();
    dir
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_verified_gadget_is_added_to_app_gadgets_keeping_the_rest_of_svc_json() {
    let key = ed25519::generate();
    let f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    let trust = verify(&f, &requested("@acme/chart@1.2.3"), &policy(true)).unwrap();
    assert_eq!(
        trust,
        Trust::Ed25519 {
            public_key_id: ed25519::public_key_id(&key.verifying_key())
        }
    );
    let dir = project_with(
        r#"{ "registry": "https://reg.example", "app": { "defaultThemeId": "paper", "gadgets": [{ "package": "@other/x", "version": "1.0.0" }] } }"#,
    );
    assert_eq!(
        write(dir.path(), &f).unwrap(),
        Installed::Gadget {
            package: "@acme/chart".into()
        }
    );
    let svc = read_json(&dir.path().join("svc.json"));
    assert_eq!(svc["registry"], json!("https://reg.example"));
    assert_eq!(svc["app"]["defaultThemeId"], json!("paper"));
    assert_eq!(svc["app"]["gadgets"][0]["package"], json!("@other/x"));
    assert_eq!(
        svc["app"]["gadgets"][1],
        json!({
            "package": "@acme/chart", "version": "1.2.3",
            "bundleUrl": "https://reg.example/bundles/sha384/abc",
            "bundleSri": payload::bundle_sha384(GADGET_JS),
            "exports": [{ "hook": "useChart", "description": "a chart", "usage": "useChart()", "example": "const c = useChart();" }]
        })
    );
    // The result is a manifest the server accepts.
    crate::manifest::load(&dir.path().join("svc.json")).unwrap();
}

#[test]
fn reinstalling_a_gadget_replaces_its_entry() {
    let key = ed25519::generate();
    let f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    let dir = project_with("{}");
    write(dir.path(), &f).unwrap();
    write(dir.path(), &f).unwrap();
    let svc = read_json(&dir.path().join("svc.json"));
    assert_eq!(svc["app"]["gadgets"].as_array().unwrap().len(), 1);
}

#[test]
fn a_verified_blueprint_gets_its_directory_and_the_include_glob_once() {
    let key = ed25519::generate();
    let f = fetched(blueprint_manifest(&key, BLUEPRINT_TSX), BLUEPRINT_TSX, &key);
    verify(&f, &requested("@acme/card@2.0.0+build.7"), &policy(true)).unwrap();
    let dir = project_with(r#"{ "blueprints": { "include": ["ui/*.json"] } }"#);
    let Installed::Blueprint { dir: installed } = write(dir.path(), &f).unwrap() else {
        panic!("a blueprint")
    };
    assert_eq!(
        installed,
        dir.path().join(".svc/installed-blueprints/@acme__card__2.0.0+build.7")
    );
    assert_eq!(std::fs::read(installed.join("index.tsx")).unwrap(), BLUEPRINT_TSX);
    assert_eq!(
        read_json(&installed.join("svc.ui.json")),
        json!({ "id": "@acme/card@2.0.0", "contract": { "propsSpec": { "type": "object" } }, "entryPoint": "index.tsx" })
    );
    write(dir.path(), &f).unwrap();
    let svc = read_json(&dir.path().join("svc.json"));
    assert_eq!(
        svc["blueprints"]["include"],
        json!(["ui/*.json", INSTALLED_BLUEPRINTS_GLOB])
    );
    // The server reads the installed blueprint through the glob.
    let loaded = crate::manifest::load(&dir.path().join("svc.json")).unwrap();
    let ids: Vec<String> = loaded.uis.unwrap().iter().map(|u| u.id.clone()).collect();
    assert_eq!(ids, vec!["@acme/card@2.0.0".to_owned()]);
    // No staging or backup directory is left behind.
    let entries: Vec<_> = std::fs::read_dir(dir.path().join(".svc/installed-blueprints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(entries, vec!["@acme__card__2.0.0+build.7".to_owned()]);
}

#[test]
fn a_tampered_bundle_fails_leg_one() {
    let key = ed25519::generate();
    let mut f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    f.bundle[0] ^= 1;
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(
        err,
        VerifyError::DigestMismatch {
            expected: payload::bundle_sha384(GADGET_JS),
            actual: payload::bundle_sha384(&f.bundle),
        }
    );
}

#[test]
fn a_pinned_key_that_does_not_derive_the_named_key_id_is_refused() {
    let key = ed25519::generate();
    let other = ed25519::generate();
    let mut f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    f.version.author_public_key = Some(ed25519::encode_public_key(&other.verifying_key()));
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(
        err,
        VerifyError::Ed25519(Ed25519Error::KeyIdMismatch {
            derived: ed25519::public_key_id(&other.verifying_key()),
            expected: ed25519::public_key_id(&key.verifying_key()),
        })
    );
}

#[test]
fn a_signature_by_another_key_is_refused() {
    let key = ed25519::generate();
    let forger = ed25519::generate();
    let mut f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    f.version.signature.value = Some(ed25519::sign(&forger, &payload::gadget_payload(GADGET_JS)));
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(err, VerifyError::Ed25519(Ed25519Error::BadSignature));
}

#[test]
fn a_blueprint_manifest_changed_after_signing_is_refused() {
    let key = ed25519::generate();
    let mut f = fetched(blueprint_manifest(&key, BLUEPRINT_TSX), BLUEPRINT_TSX, &key);
    f.version.manifest["blueprint"]["contract"] = json!({ "propsSpec": { "type": "string" } });
    let err = verify(&f, &requested("@acme/card@2.0.0+build.7"), &policy(false)).unwrap_err();
    assert_eq!(err, VerifyError::Ed25519(Ed25519Error::BadSignature));
}

#[test]
fn no_pinned_key_warns_and_continues_unless_strict() {
    let key = ed25519::generate();
    let mut f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    f.version.author_public_key = None;
    let want = requested("@acme/chart@1.2.3");
    assert_eq!(verify(&f, &want, &policy(false)).unwrap(), Trust::Unpinned);
    assert_eq!(verify(&f, &want, &policy(true)).unwrap_err(), VerifyError::UnpinnedKey);
}

#[test]
fn another_artifact_than_the_requested_one_is_refused() {
    let key = ed25519::generate();
    let f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    let err = verify(&f, &requested("@acme/chart@1.2.4"), &policy(false)).unwrap_err();
    assert_eq!(
        err,
        VerifyError::WrongArtifact {
            requested: "@acme/chart@1.2.4".into(),
            served: "@acme/chart@1.2.3".into()
        }
    );
}

#[test]
fn a_sigstore_version_without_its_bundle_is_refused() {
    let key = ed25519::generate();
    let mut manifest = gadget_manifest(&key, GADGET_JS);
    manifest["visibility"] = json!("public");
    manifest["signature"] = json!({ "algorithm": "sigstore", "bundleSha384": payload::bundle_sha384(GADGET_JS) });
    let mut f = fetched(manifest, GADGET_JS, &key);
    f.version.signature = WireSignature {
        algorithm: "sigstore".into(),
        ..WireSignature::default()
    };
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(err, VerifyError::Missing("sigstoreBundle"));
}

/// Document 3's trust model: the visibility names the one scheme that may sign a version, so a
/// registry cannot serve a public artifact under a key of its own choosing.
#[test]
fn a_public_artifact_signed_with_ed25519_is_refused_though_the_signature_verifies() {
    let key = ed25519::generate();
    let mut manifest = gadget_manifest(&key, GADGET_JS);
    manifest["visibility"] = json!("public");
    let f = fetched(manifest, GADGET_JS, &key);
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a public artifact must be signed with sigstore, but this one is signed with ed25519"
    );
    // Unpinned, the same version would have been let through with a warning.
    let mut unpinned = fetched(
        {
            let mut m = gadget_manifest(&key, GADGET_JS);
            m["visibility"] = json!("public");
            m
        },
        GADGET_JS,
        &key,
    );
    unpinned.version.author_public_key = None;
    let err = verify(&unpinned, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("a public artifact must be signed with sigstore"),
        "{err}"
    );
}

#[test]
fn a_private_artifact_signed_with_sigstore_or_of_no_visibility_is_refused() {
    let key = ed25519::generate();
    let mut manifest = gadget_manifest(&key, GADGET_JS);
    manifest["signature"] = json!({ "algorithm": "sigstore", "bundleSha384": payload::bundle_sha384(GADGET_JS) });
    let mut f = fetched(manifest, GADGET_JS, &key);
    f.version.signature = WireSignature {
        algorithm: "sigstore".into(),
        sigstore_bundle: Some(json!({})),
        ..WireSignature::default()
    };
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a private artifact must be signed with ed25519, but this one is signed with sigstore"
    );

    for visibility in [json!("internal"), Value::Null] {
        let mut manifest = gadget_manifest(&key, GADGET_JS);
        manifest["visibility"] = visibility.clone();
        let f = fetched(manifest, GADGET_JS, &key);
        let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(false)).unwrap_err();
        assert!(
            err.to_string().contains("`visibility` must be public or private"),
            "{visibility}: {err}"
        );
    }
}

/// `--certificate-identity` asks for a keyless signature by that signer; an Ed25519 signature,
/// however valid, says nothing about it.
#[test]
fn an_identity_pin_refuses_an_artifact_not_signed_keyless() {
    let key = ed25519::generate();
    let f = fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key);
    let pinned = TrustPolicy {
        identity: Some(IdentityPin {
            identity: "ci@acme.example".into(),
            issuer: "https://token.actions.githubusercontent.com".into(),
        }),
        ..policy(false)
    };
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &pinned).unwrap_err();
    assert_eq!(
        err.to_string(),
        "an identity pin (--certificate-identity) needs a sigstore signature, but this artifact is signed with ed25519"
    );
}

/// A gadget manifest may state its `bundleSri` (Document 3); install holds it to the bytes.
#[test]
fn a_manifest_bundle_sri_other_than_the_bundles_is_refused() {
    let key = ed25519::generate();
    let mut stated = gadget_manifest(&key, GADGET_JS);
    stated["bundleSri"] = json!(payload::bundle_sha384(GADGET_JS));
    let f = fetched(stated, GADGET_JS, &key);
    verify(&f, &requested("@acme/chart@1.2.3"), &policy(true)).unwrap();

    let mut wrong = gadget_manifest(&key, GADGET_JS);
    wrong["bundleSri"] = json!(payload::bundle_sha384(b"other bytes"));
    let f = fetched(wrong, GADGET_JS, &key);
    let err = verify(&f, &requested("@acme/chart@1.2.3"), &policy(true)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the manifest's bundleSri {} is not the bundle's {}",
            payload::bundle_sha384(b"other bytes"),
            payload::bundle_sha384(GADGET_JS)
        )
    );
}

#[test]
fn an_svc_json_of_the_wrong_shape_fails_before_anything_is_written() {
    let key = ed25519::generate();
    let dir = project_with(r#"{ "app": 5 }"#);
    let before = snapshot(dir.path());
    let err = write(dir.path(), &fetched(gadget_manifest(&key, GADGET_JS), GADGET_JS, &key)).unwrap_err();
    assert!(
        matches!(&err, InstallError::Project(ProjectError::Shape { field: "app", .. })),
        "{err:?}"
    );
    let dir2 = project_with(r#"{ "blueprints": { "include": "x" } }"#);
    let before2 = snapshot(dir2.path());
    let err = write(
        dir2.path(),
        &fetched(blueprint_manifest(&key, BLUEPRINT_TSX), BLUEPRINT_TSX, &key),
    )
    .unwrap_err();
    assert!(
        matches!(
            &err,
            InstallError::Project(ProjectError::Shape {
                field: "blueprints.include",
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(snapshot(dir2.path()), before2);
}

#[test]
fn a_failed_svc_json_write_removes_the_new_directory_and_restores_a_previous_install() {
    let dir = project_with(r#"{ "registry": "https://reg.example" }"#);
    let project = Project::open(dir.path()).unwrap();
    let ui = json!({ "id": "@acme/card@1.0.0", "contract": {}, "entryPoint": "index.tsx" });
    let refused = || {
        Err(ProjectError::Write {
            path: "svc.json".into(),
            reason: "disk full".into(),
        })
    };
    // First install fails: no .svc directory remains.
    let before = snapshot(dir.path());
    let err = place_blueprint(&project, "@acme__card__1.0.0", "new", &ui, refused).unwrap_err();
    assert_eq!(
        err,
        InstallError::Project(ProjectError::Write {
            path: "svc.json".into(),
            reason: "disk full".into()
        })
    );
    assert_eq!(snapshot(dir.path()), before);
    // An earlier install of the same version survives a failed reinstall byte for byte.
    place_blueprint(&project, "@acme__card__1.0.0", "old", &ui, || Ok(())).unwrap();
    let before = snapshot(dir.path());
    place_blueprint(&project, "@acme__card__1.0.0", "new", &ui, refused).unwrap_err();
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_project_without_svc_json_gets_one() {
    let key = ed25519::generate();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &fetched(blueprint_manifest(&key, BLUEPRINT_TSX), BLUEPRINT_TSX, &key),
    )
    .unwrap();
    let svc = read_json(&dir.path().join("svc.json"));
    assert_eq!(svc, json!({ "blueprints": { "include": [INSTALLED_BLUEPRINTS_GLOB] } }));
}

#[test]
fn scope_name_version_is_parsed_with_or_without_the_at_sign() {
    let r = requested("@acme/chart@1.2.3-alpha.1+build.42");
    assert_eq!(
        (r.scope.as_str(), r.name.as_str(), r.version.as_str()),
        ("@acme", "chart", "1.2.3-alpha.1+build.42")
    );
    assert_eq!(requested("acme/chart@1.0.0").scope, "@acme");
    for bad in [
        "@acme/chart",
        "chart@1.0.0",
        "@acme/a/b@1.0.0",
        "@/chart@1.0.0",
        "@acme/chart@",
    ] {
        assert!(bad.parse::<Requested>().is_err(), "{bad}");
    }
}
