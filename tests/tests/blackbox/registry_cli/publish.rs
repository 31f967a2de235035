//! `svc author-key generate` and `svc publish`: the key file, a dirty work tree refused unless
//! allowed, and the keyless payload printed without a key.

use serde_json::{Value, json};
use svc_attest::ed25519;
use svc_tests::temp_dir;

use crate::registry_cli::support::{GADGET_JS, fake_registry, stderr, stdout, svc};

#[tokio::test]
async fn author_key_generate_writes_a_private_key_file_and_prints_its_id() {
    let config = temp_dir("svc-author-key");
    let out = svc(&["author-key", "generate"], &config, &config).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let path = config.join("svc/author-key.json");
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let public = ed25519::decode_public_key(file["publicKey"].as_str().unwrap()).unwrap();
    let id = ed25519::public_key_id(&public);
    assert!(
        stdout(&out).contains(&format!("public key id: {id}")),
        "{}",
        stdout(&out)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let again = svc(&["author-key", "generate"], &config, &config).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("exists; pass --force"), "{}", stderr(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_refuses_a_dirty_work_tree_unless_allowed() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "POST /publish",
        201,
        json!({ "scope": "@acme", "name": "chart", "version": "1.0.0", "bundleSri": "sha384-x", "bundleUrl": format!("{base}/bundles/sha384/ab"), "publishedAt": "now" }).to_string(),
    );
    let dir = temp_dir("svc-publish-dirty");
    assert!(svc(&["author-key", "generate"], &dir, &dir).await.status.success());
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::write(dir.join("chart.json"), json!({ "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.0.0", "visibility": "private", "gadget": { "exports": [{ "hook": "useChart" }] } }).to_string()).unwrap();
    std::fs::write(dir.join("chart.js"), GADGET_JS).unwrap();
    let args = [
        "publish",
        "--registry",
        &base,
        "--token",
        "t",
        "--manifest",
        "chart.json",
        "--bundle",
        "chart.js",
    ];
    let out = svc(&args, &dir, &dir).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("refusing to publish a dirty version"),
        "{}",
        stderr(&out)
    );
    assert!(fake.seen.lock().unwrap().is_empty(), "nothing was sent");
    let mut allowed = args.to_vec();
    allowed.push("--allow-dirty");
    let out = svc(&allowed, &dir, &dir).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The keyless workflow of docs/registry-cli.md: `--print-payload` needs no author key, and the
/// bytes it writes are the keyless payload (the manifest completed for Sigstore), not an Ed25519
/// one naming a key.
#[tokio::test]
async fn print_payload_writes_the_keyless_payload_without_an_author_key() {
    let dir = temp_dir("svc-print-payload");
    let manifest = json!({ "kind": "blueprint", "scope": "@acme", "name": "card", "version": "1.0.0",
                           "visibility": "public", "blueprint": { "contract": {} } });
    std::fs::write(dir.join("card.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("card.tsx"), "export default function Card() { return null; }").unwrap();
    let args = [
        "publish",
        "--manifest",
        "card.json",
        "--bundle",
        "card.tsx",
        "--print-payload",
        "payload.bin",
    ];
    let out = svc(&args, &dir, &dir).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let payload: Value = serde_json::from_slice(&std::fs::read(dir.join("payload.bin")).unwrap()).unwrap();
    assert_eq!(payload["signature"]["algorithm"], "sigstore");
    assert!(payload.get("authorPublicKey").is_none(), "{payload}");
    assert_eq!(payload["name"], "card");

    let with_key = svc(&[&args[..], &["--key", "k.json"]].concat(), &dir, &dir).await;
    assert_eq!(
        with_key.status.code(),
        Some(2),
        "a key and --print-payload are a usage error"
    );
}

/// What a hostile registry answers to a publish, a refusal or an acceptance, is printed with its
/// escape sequences escaped (`\x1b`), never as raw bytes a terminal would obey.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_registrys_answer_is_printed_escaped() {
    let (base, fake) = fake_registry().await;
    let dir = temp_dir("svc-publish-hostile");
    assert!(svc(&["author-key", "generate"], &dir, &dir).await.status.success());
    std::fs::write(dir.join("chart.json"), json!({ "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.0.0", "visibility": "private", "gadget": { "exports": [{ "hook": "useChart" }] } }).to_string()).unwrap();
    std::fs::write(dir.join("chart.js"), GADGET_JS).unwrap();
    let args = [
        "publish",
        "--registry",
        &base,
        "--token",
        "t",
        "--manifest",
        "chart.json",
        "--bundle",
        "chart.js",
        "--allow-dirty",
    ];

    fake.answer(
        "POST /publish",
        403,
        json!({ "error": "quota_exceeded\u{1b}[8m", "message": "full\u{1b}[2J" }).to_string(),
    );
    let out = svc(&args, &dir, &dir).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "svc: publish refused: the registry answered 403: full\\x1b[2J (quota_exceeded\\x1b[8m)"
    );

    fake.answer(
        "POST /publish",
        201,
        json!({ "scope": "@acme\u{1b}[31m", "name": "chart", "version": "1.0.0", "bundleSri": "sha384-x\u{9b}2J",
                "bundleUrl": format!("{base}/bundles/sha384/ab\u{1b}[0m"), "publishedAt": "now" })
        .to_string(),
    );
    let out = svc(&args, &dir, &dir).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("published @acme\\x1b[31m/chart@1.0.0 (sha384-x\\u{{9b}}2J)\n{base}/bundles/sha384/ab\\x1b[0m\n")
    );
}
