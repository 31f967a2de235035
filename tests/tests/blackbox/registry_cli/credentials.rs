//! Registry credentials: `svc login` stores a token the registry accepted, which register and
//! publish then send, and an explicit token goes only to a registry the user named.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use svc_attest::{ed25519, payload};
use svc_tests::temp_dir;

use crate::registry_cli::support::{
    BINARY, Fake, GADGET_JS, fake_registry, project_using, publish_in_fake, stderr, stdout, svc,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_stores_the_token_that_register_and_publish_then_send() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "GET /whoami",
        200,
        json!({ "publisher": "acme", "admin": false }).to_string(),
    );
    let config = temp_dir("svc-login");
    let out = svc(&["login", "--registry", &base, "--token", "tok_123"], &config, &config).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("as acme"), "{}", stdout(&out));
    let stored: Value = serde_json::from_slice(&std::fs::read(config.join("svc/credentials.json")).unwrap()).unwrap();
    assert_eq!(stored["registries"][&base]["token"], json!("tok_123"));

    assert!(
        svc(&["author-key", "generate"], &config, &config)
            .await
            .status
            .success()
    );
    let key_file: Value = serde_json::from_slice(&std::fs::read(config.join("svc/author-key.json")).unwrap()).unwrap();
    fake.answer(
        "POST /author-keys",
        201,
        json!({ "publicKeyId": key_file["publicKeyId"], "publicKey": key_file["publicKey"], "publisher": "acme", "createdAt": "2026-11-26T00:00:00Z" })
            .to_string(),
    );
    let out = svc(&["author-key", "register", "--registry", &base], &config, &config).await;
    assert!(out.status.success(), "{}", stderr(&out));

    std::fs::write(config.join("chart.json"), json!({ "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.0.0", "visibility": "private", "gadget": { "exports": [{ "hook": "useChart" }] } }).to_string()).unwrap();
    std::fs::write(config.join("chart.js"), GADGET_JS).unwrap();
    fake.answer(
        "POST /publish",
        201,
        json!({ "scope": "@acme", "name": "chart", "version": "1.0.0", "bundleSri": "sha384-x", "bundleUrl": format!("{base}/bundles/sha384/ab"), "publishedAt": "now" }).to_string(),
    );
    let out = svc(
        &[
            "publish",
            "--registry",
            &base,
            "--manifest",
            "chart.json",
            "--bundle",
            "chart.js",
        ],
        &config,
        &config,
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));

    let seen = fake.seen.lock().unwrap().clone();
    let register = seen.iter().find(|(r, _, _)| r == "POST /author-keys").unwrap();
    assert_eq!(register.1.as_deref(), Some("Bearer tok_123"));
    assert_eq!(register.2["publicKey"], key_file["publicKey"]);
    let (_, auth, body) = seen.iter().find(|(r, _, _)| r == "POST /publish").unwrap();
    assert_eq!(auth.as_deref(), Some("Bearer tok_123"));
    // The registry can check what was sent: leg one and leg two as install runs them.
    let public = ed25519::decode_public_key(body["manifest"]["authorPublicKey"].as_str().unwrap()).unwrap();
    assert_eq!(body["manifest"]["signature"]["publicKeyId"], key_file["publicKeyId"]);
    assert_eq!(
        body["bundleSha384"],
        json!(payload::bundle_sha384(GADGET_JS.as_bytes()))
    );
    ed25519::verify(
        &public,
        &payload::gadget_payload(GADGET_JS.as_bytes()),
        body["signature"]["value"].as_str().unwrap(),
    )
    .unwrap();

    // A refused publish names the registry's code.
    fake.answer(
        "POST /publish",
        409,
        json!({ "error": "version_exists", "message": "@acme/chart@1.0.0 exists" }).to_string(),
    );
    let out = svc(
        &[
            "publish",
            "--registry",
            &base,
            "--manifest",
            "chart.json",
            "--bundle",
            "chart.js",
        ],
        &config,
        &config,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("409: @acme/chart@1.0.0 exists (version_exists)"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_registry_refuses_is_not_stored() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "GET /whoami",
        401,
        json!({ "error": "unauthorized", "message": "invalid token" }).to_string(),
    );
    let config = temp_dir("svc-login-refused");
    let out = svc(&["login", "--registry", &base, "--token", "bad"], &config, &config).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the token was not accepted"), "{}", stderr(&out));
    assert!(!config.join("svc/credentials.json").exists());
}

/// `svc install @acme/chart@1.0.0` in `project` with SVC_REGISTRY_URL and SVC_REGISTRY_TOKEN set,
/// as a user's shell has them.
async fn install_with_token_in_env(project: &Path, config: &Path, registry_env: &str, extra: &[&str]) -> Output {
    tokio::process::Command::new(BINARY)
        .args(["install", "@acme/chart@1.0.0"])
        .args(extra)
        .current_dir(project)
        .env("XDG_CONFIG_HOME", config)
        .env("SVC_REGISTRY_URL", registry_env)
        .env("SVC_REGISTRY_TOKEN", "svcreg_mine")
        .output()
        .await
        .unwrap()
}

/// An explicit token (SVC_REGISTRY_TOKEN or --token) goes only to a registry the user named: the
/// one a cloned project's svc.json names gets no Authorization header, and stderr says why; once
/// the user names that registry too, it gets the token (docs/registry-cli.md, "Credentials").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_token_is_not_sent_to_a_registry_only_svc_json_names() {
    let (ours, our_fake) = fake_registry().await;
    let (theirs, their_fake) = fake_registry().await;
    let key = ed25519::generate();
    publish_in_fake(&their_fake, &theirs, &key, "gadget", "chart", GADGET_JS.as_bytes());
    let project = project_using(&theirs, "svc-token-scope");
    let config = temp_dir("svc-token-scope-config");
    let authorizations = |fake: &Fake| {
        let seen = fake.seen.lock().unwrap();
        assert!(!seen.is_empty(), "the install talked to this registry");
        seen.iter().map(|(_, auth, _)| auth.clone()).collect::<Vec<_>>()
    };

    // Install takes svc.json's registry before SVC_REGISTRY_URL: the token stays home.
    let out = install_with_token_in_env(&project, &config, &ours, &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(authorizations(&their_fake).iter().all(Option::is_none));
    assert!(our_fake.seen.lock().unwrap().is_empty());
    assert!(
        stderr(&out).contains(&format!(
            "svc: warning: SVC_REGISTRY_TOKEN is sent only to a registry named by --registry or SVC_REGISTRY_URL, not to {theirs}"
        )),
        "{}",
        stderr(&out)
    );

    // A token on the command line is explicit too.
    their_fake.seen.lock().unwrap().clear();
    let out = install_with_token_in_env(&project, &config, &ours, &["--token", "svcreg_flag"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(authorizations(&their_fake).iter().all(Option::is_none));
    assert!(
        stderr(&out).contains("--token is sent only to a registry named by"),
        "{}",
        stderr(&out)
    );

    // The user names svc.json's registry as well: now it is theirs to receive.
    their_fake.seen.lock().unwrap().clear();
    let out = install_with_token_in_env(&project, &config, &theirs, &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        authorizations(&their_fake)
            .iter()
            .all(|auth| auth.as_deref() == Some("Bearer svcreg_mine"))
    );
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}
