//! `svc verify` over the Sigstore fixtures against the staging root: the verifying ones pinned to
//! their signers, every failing one with its reason, a tampered file, a wrong identity, the
//! production root, and a pin without its issuer.

use std::path::{Path, PathBuf};
use std::process::Output;

use svc_tests::temp_dir;

use crate::registry_cli::support::{stderr, stdout, svc};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sigstore")
}

fn staging_args() -> Vec<String> {
    vec![
        "--trusted-root".into(),
        fixtures().join("staging-trusted_root.json").display().to_string(),
    ]
}

async fn verify(file: &Path, bundle: &str, extra: &[&str]) -> Output {
    let bundle = fixtures().join(bundle).display().to_string();
    let file = file.display().to_string();
    let mut args = vec!["verify", file.as_str(), "--bundle", bundle.as_str()];
    let staging = staging_args();
    args.extend(staging.iter().map(String::as_str));
    args.extend(extra);
    let dir = temp_dir("svc-verify");
    svc(&args, &dir, &dir).await
}

#[tokio::test]
async fn verify_accepts_the_v01_and_v03_fixtures_pinned_to_their_signers() {
    for (artifact, bundle, identity) in [
        ("bundle.txt", "bundle.txt.sigstore", "a@tny.town"),
        ("bundle_v3.txt", "bundle_v3.txt.sigstore", "william@yossarian.net"),
    ] {
        let pin = [
            "--certificate-identity",
            identity,
            "--certificate-oidc-issuer",
            "https://github.com/login/oauth",
        ];
        let out = verify(&fixtures().join(artifact), bundle, &pin).await;
        assert_eq!(out.status.code(), Some(0), "{bundle}: {}", stderr(&out));
        assert!(stdout(&out).starts_with("Verified OK"), "{}", stdout(&out));
    }
}

#[tokio::test]
async fn verify_refuses_every_failing_fixture_with_its_reason() {
    for (artifact, bundle, reason) in [
        (
            "bundle_cve_2022_36056.txt",
            "bundle_cve_2022_36056.txt.sigstore",
            "log entry does not match the bundle",
        ),
        (
            "bundle_no_log_entry.txt",
            "bundle_no_log_entry.txt.sigstore",
            "must have an inclusion promise",
        ),
        (
            "bundle_invalid_version.txt",
            "bundle_invalid_version.txt.sigstore",
            "Invalid media type",
        ),
        (
            "bundle_v3_no_signed_time.txt",
            "bundle_v3_no_signed_time.txt.sigstore.json",
            "no verified timestamp",
        ),
    ] {
        let out = verify(&fixtures().join(artifact), bundle, &[]).await;
        assert_eq!(out.status.code(), Some(1), "{bundle}");
        let err = stderr(&out);
        assert!(
            err.starts_with("svc: ") && err.contains("verification failed") && err.contains(reason),
            "{bundle}: {err}"
        );
    }
}

#[tokio::test]
async fn verify_refuses_a_tampered_file_a_wrong_identity_and_the_production_root() {
    let dir = temp_dir("svc-verify-tampered");
    let mut bytes = std::fs::read(fixtures().join("bundle_v3.txt")).unwrap();
    bytes[0] ^= 1;
    let tampered = dir.join("bundle_v3.txt");
    std::fs::write(&tampered, bytes).unwrap();
    let out = verify(&tampered, "bundle_v3.txt.sigstore", &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("does not match artifact hash"),
        "{}",
        stderr(&out)
    );

    let wrong = [
        "--certificate-identity",
        "a@tny.town",
        "--certificate-oidc-issuer",
        "https://github.com/login/oauth",
    ];
    let out = verify(&fixtures().join("bundle_v3.txt"), "bundle_v3.txt.sigstore", &wrong).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("identity mismatch: expected a@tny.town, got william@yossarian.net"),
        "{}",
        stderr(&out)
    );

    // Without --trusted-root the production root is used, which does not trust staging.
    let file = fixtures().join("bundle_v3.txt").display().to_string();
    let bundle = fixtures().join("bundle_v3.txt.sigstore").display().to_string();
    let out = svc(&["verify", &file, "--bundle", &bundle], &dir, &dir).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("No log key valid"), "{}", stderr(&out));
}

#[tokio::test]
async fn an_identity_pin_needs_its_issuer() {
    let out = verify(
        &fixtures().join("bundle.txt"),
        "bundle.txt.sigstore",
        &["--certificate-identity", "a@tny.town"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(stderr(&out).contains("--certificate-oidc-issuer"), "{}", stderr(&out));
}
