//! The registry commands of the `svc` binary as a user meets them: `svc verify` over every Sigstore
//! fixture (exit 0 verified, 1 with the reason), `svc author-key generate`, and login, search,
//! author-key register, publish and install against a loopback fake of the registry's routes
//! (docs/registry.md); the end-to-end run against the real registry server lives with it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::Data;
use poem::{Body, EndpointExt, Request, Route, Server, handler};
use serde_json::{Value, json};
use svc_attest::ed25519;
use svc_attest::payload;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sigstore")
}

/// Runs the binary with a private config dir and no registry variables from the caller's shell.
async fn svc(args: &[&str], config: &Path, cwd: &Path) -> Output {
    tokio::process::Command::new(BINARY)
        .args(args)
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("SVC_REGISTRY_URL")
        .env_remove("SVC_REGISTRY_TOKEN")
        .output()
        .await
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

#[tokio::test]
async fn search_without_a_registry_says_how_to_name_one() {
    let dir = temp_dir("svc-no-registry");
    let out = svc(&["search", "chart"], &dir, &dir).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "svc: no registry: pass --registry URL, set SVC_REGISTRY_URL, or add \"registry\" to svc.json"
    );
}

// ---- a loopback fake of the registry ----

/// Canned answers by "METHOD /path" and every request seen ("METHOD /path?query", authorization, body).
#[derive(Default)]
struct Fake {
    answers: Mutex<HashMap<String, (u16, Vec<u8>)>>,
    seen: Mutex<Vec<(String, Option<String>, Value)>>,
}

impl Fake {
    fn answer(&self, route: &str, status: u16, body: impl Into<Vec<u8>>) {
        self.answers
            .lock()
            .unwrap()
            .insert(route.to_owned(), (status, body.into()));
    }
}

#[handler]
async fn any_route(req: &Request, body: Body, Data(fake): Data<&Arc<Fake>>) -> poem::Response {
    let route = format!("{} {}", req.method(), req.uri().path());
    let auth = req.header("authorization").map(str::to_owned);
    let body: Value = serde_json::from_slice(&body.into_vec().await.unwrap()).unwrap_or(Value::Null);
    let seen = match req.uri().query() {
        Some(q) => format!("{route}?{q}"),
        None => route.clone(),
    };
    fake.seen.lock().unwrap().push((seen, auth, body));
    let answer = fake.answers.lock().unwrap().get(&route).cloned();
    let (status, bytes) = answer.unwrap_or((404, br#"{"error":"not_found","message":"no such route"}"#.to_vec()));
    poem::Response::builder()
        .status(poem::http::StatusCode::from_u16(status).unwrap())
        .content_type("application/json")
        .body(bytes)
}

async fn fake_registry() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
    let app = Route::new().at("/*path", any_route).data(fake.clone());
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    (format!("http://127.0.0.1:{port}"), fake)
}

const GADGET_JS: &str = "export function useChart() { return 1; }";
const CARD_TSX: &str = "export default function Card() { return <div>card</div>; }";

/// Serves `@acme/<name>@1.0.0` signed by `key`, as GET /pkg and GET /bundles answer it; returns
/// the version body served.
fn publish_in_fake(
    fake: &Fake,
    base: &str,
    key: &ed25519::AuthorSigningKey,
    kind: &str,
    name: &str,
    bytes: &[u8],
) -> Value {
    publish_in_fake_as(fake, base, key, "private", kind, name, bytes)
}

/// [`publish_in_fake`] with the manifest's `visibility`, still signed with Ed25519 by `key`.
fn publish_in_fake_as(
    fake: &Fake,
    base: &str,
    key: &ed25519::AuthorSigningKey,
    visibility: &str,
    kind: &str,
    name: &str,
    bytes: &[u8],
) -> Value {
    let public = key.verifying_key();
    let mut manifest = json!({
        "kind": kind, "scope": "@acme", "name": name, "version": "1.0.0", "visibility": visibility,
        "description": "d", "tags": [],
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&public),
                       "bundleSha384": payload::bundle_sha384(bytes) },
        "authorPublicKey": ed25519::encode_public_key(&public),
    });
    if kind == "gadget" {
        manifest["gadget"] = json!({ "exports": [{ "hook": "useChart", "description": "a chart", "usage": "useChart()", "example": "useChart()" }] });
    } else {
        manifest["blueprint"] = json!({ "contract": {}, "entryPoint": "index.tsx", "fixtureProps": {} });
    }
    let signed = payload::signed_payload(kind, &manifest, bytes).unwrap();
    let bundle_path = format!("/bundles/sha384/{name}");
    let version = json!({
        "manifest": manifest, "bundleUrl": format!("{base}{bundle_path}"), "bundleSri": payload::bundle_sha384(bytes),
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&public), "value": ed25519::sign(key, &signed) },
        "authorPublicKey": ed25519::encode_public_key(&public), "publishedAt": "2026-11-26T00:00:00Z"
    });
    fake.answer(&format!("GET /pkg/@acme/{name}/1.0.0"), 200, version.to_string());
    fake.answer(&format!("GET {bundle_path}"), 200, bytes.to_vec());
    version
}

/// A fresh project directory whose svc.json names the registry at `base`.
fn project_using(base: &str, name: &str) -> PathBuf {
    let project = temp_dir(name);
    std::fs::write(
        project.join("svc.json"),
        "{ \"registry\": \"".to_owned() + base + "\" }\n",
    )
    .unwrap();
    project
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_sends_the_filters_and_prints_one_line_per_artifact() {
    let (base, fake) = fake_registry().await;
    fake.answer(
        "GET /search",
        200,
        json!({ "results": [{ "scope": "@acme", "name": "chart", "latestVersion": "1.2.0", "kind": "gadget", "description": "charts", "tags": ["viz"], "author": "acme" }] })
            .to_string(),
    );
    let dir = temp_dir("svc-search");
    let out = tokio::process::Command::new(BINARY)
        .args(["search", "chart", "--kind", "gadget", "--tag", "viz"])
        .current_dir(&dir)
        .env("XDG_CONFIG_HOME", &dir)
        .env("SVC_REGISTRY_URL", &base)
        .env_remove("SVC_REGISTRY_TOKEN")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "@acme/chart@1.2.0\tgadget\tcharts [viz]\tby acme\n");
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen[0].0, "GET /search?q=chart&kind=gadget&tag=viz");
    assert_eq!(seen[0].1, None, "a public read sends no credential");
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
