//! `svc install`: it verifies, then writes a gadget and a blueprint; a yanked version, a tampered
//! or oversized bundle, a wrong or unpinned key, or a scheme that does not fit is refused with the
//! project left as it was.

use serde_json::{Value, json};
use svc_attest::{ed25519, payload};
use svc_tests::temp_dir;

use crate::registry_cli::support::{
    CARD_TSX, GADGET_JS, fake_registry, project_using, publish_in_fake, publish_in_fake_as, snapshot, stderr, svc,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_verifies_then_writes_a_gadget_and_a_blueprint_from_svc_json_registry() {
    let (base, fake) = fake_registry().await;
    let key = ed25519::generate();
    publish_in_fake(&fake, &base, &key, "gadget", "chart", GADGET_JS.as_bytes());
    publish_in_fake(&fake, &base, &key, "blueprint", "card", CARD_TSX.as_bytes());
    let project = temp_dir("svc-install");
    std::fs::write(project.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();

    let out = svc(&["install", "@acme/chart@1.0.0"], &project, &project).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = svc(&["install", "acme/card@1.0.0"], &project, &project).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "quiet when piped: {}", stderr(&out));

    let manifest: Value = serde_json::from_slice(&std::fs::read(project.join("svc.json")).unwrap()).unwrap();
    assert_eq!(manifest["app"]["gadgets"][0]["package"], json!("@acme/chart"));
    assert_eq!(
        manifest["app"]["gadgets"][0]["bundleSri"],
        json!(payload::bundle_sha384(GADGET_JS.as_bytes()))
    );
    assert_eq!(manifest["app"]["gadgets"][0]["exports"][0]["hook"], json!("useChart"));
    assert_eq!(
        manifest["blueprints"]["include"],
        json!([".svc/installed-blueprints/*/svc.ui.json"])
    );
    let dir = project.join(".svc/installed-blueprints/@acme__card__1.0.0");
    assert_eq!(std::fs::read_to_string(dir.join("index.tsx")).unwrap(), CARD_TSX);
    let ui: Value = serde_json::from_slice(&std::fs::read(dir.join("svc.ui.json")).unwrap()).unwrap();
    assert_eq!(
        ui,
        json!({ "id": "@acme/card@1.0.0", "contract": {}, "entryPoint": "index.tsx" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yanked_version_or_a_tampered_bundle_exits_1_and_leaves_the_project_as_it_was() {
    let (base, fake) = fake_registry().await;
    let key = ed25519::generate();
    publish_in_fake(&fake, &base, &key, "gadget", "chart", GADGET_JS.as_bytes());
    fake.answer(
        "GET /bundles/sha384/chart",
        200,
        b"export function useChart() { return 2; }".to_vec(),
    );
    fake.answer(
        "GET /pkg/@acme/old/1.0.0",
        410,
        json!({ "error": "version_yanked", "message": "yanked", "reason": "leaks tokens", "manifest": { "kind": "gadget" } })
            .to_string(),
    );
    let project = project_using(&base, "svc-install-fail");
    let before = snapshot(&project);

    let out = svc(&["install", "@acme/chart@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did not verify: the bundle's sha384 is"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&project), before);

    let out = svc(&["install", "@acme/old@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "svc: @acme/old@1.0.0 was yanked by the registry (leaks tokens); install another version"
    );
    assert_eq!(snapshot(&project), before);
}

/// A registry (or a bundle's host) that sends more than any real answer is refused, not read
/// into memory whole; the project stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_larger_than_any_real_one_are_refused() {
    let (base, fake) = fake_registry().await;
    let key = ed25519::generate();
    publish_in_fake(&fake, &base, &key, "gadget", "chart", GADGET_JS.as_bytes());
    fake.answer("GET /bundles/sha384/chart", 200, vec![b' '; 8 * 1024 * 1024 + 1]);
    fake.answer("GET /search", 200, vec![b' '; 16 * 1024 * 1024 + 1]);
    let project = project_using(&base, "svc-oversized");
    let before = snapshot(&project);

    let out = svc(&["install", "@acme/chart@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/bundles/sha384/chart sent more than 8388608 bytes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&project), before);

    let out = svc(&["search", "chart"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sent more than 16777216 bytes"),
        "{}",
        stderr(&out)
    );
}

/// The second leg as a user meets it: a registry whose pinned key is not the one the signature
/// names exits 1 naming both ids; a version with no pinned key installs with a warning, and
/// `--strict` refuses it. Nothing is written on a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_id_exits_1_and_an_unpinned_key_warns_unless_strict() {
    let (base, fake) = fake_registry().await;
    let (key, other) = (ed25519::generate(), ed25519::generate());
    let mut swapped = publish_in_fake(&fake, &base, &key, "gadget", "swapped", GADGET_JS.as_bytes());
    swapped["authorPublicKey"] = json!(ed25519::encode_public_key(&other.verifying_key()));
    fake.answer("GET /pkg/@acme/swapped/1.0.0", 200, swapped.to_string());
    let mut unpinned = publish_in_fake(&fake, &base, &key, "gadget", "unpinned", GADGET_JS.as_bytes());
    unpinned.as_object_mut().unwrap().remove("authorPublicKey");
    fake.answer("GET /pkg/@acme/unpinned/1.0.0", 200, unpinned.to_string());
    let project = temp_dir("svc-install-keys");
    std::fs::write(project.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    let before = snapshot(&project);

    let out = svc(&["install", "@acme/swapped@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        format!(
            "svc: @acme/swapped@1.0.0 did not verify: the pinned public key derives key id {}, but the signature names {}",
            ed25519::public_key_id(&other.verifying_key()),
            ed25519::public_key_id(&key.verifying_key())
        )
    );
    assert_eq!(snapshot(&project), before);

    let out = svc(&["install", "@acme/unpinned@1.0.0", "--strict"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "svc: @acme/unpinned@1.0.0 did not verify: the registry pinned no author public key for this version (refused by --strict)"
    );
    assert_eq!(snapshot(&project), before);

    let out = svc(&["install", "@acme/unpinned@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "svc: warning: the registry pinned no author key for @acme/unpinned@1.0.0; its signature was not checked (--strict refuses this)"
    );
    let svc_json: Value = serde_json::from_slice(&std::fs::read(project.join("svc.json")).unwrap()).unwrap();
    assert_eq!(svc_json["app"]["gadgets"][0]["package"], "@acme/unpinned");
}

/// Document 3's trust model as install holds it: a registry serving a `public` artifact signed with
/// an Ed25519 key of its choosing (the signature verifies) is refused, and so is an artifact not
/// signed keyless when an identity pin was given. Exit 1, nothing written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_refuses_a_scheme_that_does_not_fit_the_visibility_or_the_identity_pin() {
    let (base, fake) = fake_registry().await;
    let key = ed25519::generate();
    publish_in_fake(&fake, &base, &key, "gadget", "chart", GADGET_JS.as_bytes());
    let public = publish_in_fake_as(&fake, &base, &key, "public", "gadget", "open", GADGET_JS.as_bytes());
    assert_eq!(public["manifest"]["visibility"], "public");
    let project = project_using(&base, "svc-install-scheme");
    let before = snapshot(&project);

    let out = svc(&["install", "@acme/open@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "svc: @acme/open@1.0.0 did not verify: a public artifact must be signed with sigstore, but this one is signed with ed25519"
    );
    assert_eq!(snapshot(&project), before);

    let pin = [
        "--certificate-identity",
        "ci@acme.example",
        "--certificate-oidc-issuer",
        "https://token.actions.githubusercontent.com",
    ];
    let out = svc(
        &[&["install", "@acme/chart@1.0.0"][..], &pin[..]].concat(),
        &project,
        &project,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "svc: @acme/chart@1.0.0 did not verify: an identity pin (--certificate-identity) needs a sigstore signature, but this artifact is signed with ed25519"
    );
    assert_eq!(snapshot(&project), before);

    // Without the pin, the private artifact installs.
    let out = svc(&["install", "@acme/chart@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Document 3: a yanked version answers HTTP 410. The status is what install reads, so a registry
/// whose body names another code, or is not JSON, still gets the yanked message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_is_a_yank_whatever_the_body_says() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "GET /pkg/@acme/gone/1.0.0",
        410,
        json!({ "error": "gone", "message": "yanked", "reason": "broken build", "manifest": { "kind": "gadget" } })
            .to_string(),
    );
    fake.answer("GET /pkg/@acme/html/1.0.0", 410, b"<html>Gone</html>".to_vec());
    let project = project_using(&base, "svc-install-410");
    let before = snapshot(&project);
    for (spec, reason) in [
        ("@acme/gone@1.0.0", "broken build"),
        ("@acme/html@1.0.0", "no reason given"),
    ] {
        let out = svc(&["install", spec], &project, &project).await;
        assert_eq!(out.status.code(), Some(1), "{spec}");
        assert_eq!(
            stderr(&out).trim(),
            format!("svc: {spec} was yanked by the registry ({reason}); install another version")
        );
    }
    assert_eq!(snapshot(&project), before);
}

/// A hostile registry's text reaches the terminal escaped: a yank reason, and a served manifest
/// naming another package, each holding an escape sequence, show `\x1b`, never the raw byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_registrys_text_is_printed_escaped() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "GET /pkg/@acme/gone/1.0.0",
        410,
        json!({ "error": "version_yanked", "message": "m", "reason": "\u{1b}[2J\u{1b}[31mcleared" }).to_string(),
    );
    let key = ed25519::generate();
    let mut served = publish_in_fake(&fake, &base, &key, "gadget", "chart", GADGET_JS.as_bytes());
    served["manifest"]["name"] = json!("chart\u{1b}]0;owned\u{7}");
    fake.answer("GET /pkg/@acme/chart/1.0.0", 200, served.to_string());
    let project = project_using(&base, "svc-install-hostile");

    let out = svc(&["install", "@acme/gone@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "svc: @acme/gone@1.0.0 was yanked by the registry (\\x1b[2J\\x1b[31mcleared); install another version"
    );

    let out = svc(&["install", "@acme/chart@1.0.0"], &project, &project).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).contains('\u{1b}'), "{:?}", stderr(&out));
    assert!(stderr(&out).contains("chart\\x1b]0;owned\\x07"), "{:?}", stderr(&out));
}
