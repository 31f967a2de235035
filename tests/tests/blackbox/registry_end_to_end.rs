//! The registry CLI against the real registry server (`svc registry serve`'s application, on
//! SQLite): a publisher logs in with a minted token, generates and registers an author key,
//! publishes a private gadget and a private blueprint that imports it, searches, and installs both
//! into a fresh project, where install verifies each against the key that signed it. `svc serve`
//! in that project compiles the installed blueprint, and Chromium mounts a card of it that draws
//! with the installed gadget, its bundle checked against `bundleSri`; the registry's stored bundle
//! tampered with is refused by the browser (`tests/browser/installed-card.mjs`). A yanked version
//! then fails to install and leaves the project as it was.

use crate::registry_support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use registry_support::Registry;
use serde_json::{Value, json};
use svc_tests::external::{deps_present, run_with_deadline};
use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const BROWSER_DEADLINE: Duration = Duration::from_secs(180);

/// The gadget: `useSparkline` draws values as bars, so only this bundle's code can draw them.
const GADGET_JS: &str = "const BARS = \"\\u2581\\u2582\\u2583\\u2584\\u2585\\u2586\\u2587\\u2588\";\n\
     export function useSparkline(values) { return values.map((v) => BARS[Math.min(7, Math.max(0, v))]).join(\"\"); }\n\
     export const useBars = (values) => values.map((v) => v * 2);\n";

/// The blueprint: imports the gadget its contract lists in `clientCapabilities.gadgets`.
const BLUEPRINT_TSX: &str = "import { useProps } from \"@svc/gadgets\";\n\
     import { useSparkline } from \"@acme/charts\";\n\
     export default function Board() {\n\
       const props = useProps<{ title: string; values: number[] }>();\n\
       const bars = useSparkline(props.values);\n\
       return <section><h1>{props.title}</h1><p>sparkline: {bars}</p></section>;\n\
     }\n";

/// The binary with a private config dir, run in `cwd`, without the caller's registry variables.
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

fn succeeded(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_search_install_and_yank_through_the_cli_against_the_real_registry() {
    let registry = Registry::spawn("registry_end_to_end", svc_tests::Backend::Sqlite)
        .await
        .expect("SQLite always runs");
    let base = registry.base.clone();
    let token = registry.mint("acme", false);
    let home = temp_dir("svc-e2e-publisher");

    succeeded(
        &svc(&["login", "--registry", &base, "--token", &token], &home, &home).await,
        "login",
    );
    succeeded(
        &svc(&["author-key", "generate"], &home, &home).await,
        "author-key generate",
    );
    succeeded(
        &svc(&["author-key", "register", "--registry", &base], &home, &home).await,
        "author-key register",
    );

    let gadget = json!({
        "kind": "gadget", "scope": "@acme", "name": "charts", "version": "1.0.0",
        "visibility": "private", "description": "Sparkline and bar charts", "tags": ["chart"],
        "gadget": { "exports": [
            { "hook": "useSparkline", "description": "a sparkline", "usage": "useSparkline(values)", "example": "useSparkline([1, 2])" },
            { "hook": "useBars", "description": "bars", "usage": "useBars(values)", "example": "useBars([1])" }
        ] }
    });
    let blueprint = json!({
        "kind": "blueprint", "scope": "@acme", "name": "board", "version": "1.0.0",
        "visibility": "private", "description": "A status board", "tags": ["board"],
        "blueprint": {
            "contract": {
                "propsSpec": { "type": "object", "properties": {
                    "title": { "type": "string" },
                    "values": { "type": "array", "items": { "type": "integer" } }
                }, "required": ["title", "values"] },
                "clientCapabilities": { "gadgets": { "@acme/charts": "1.0.0" } }
            },
            "entryPoint": "index.tsx",
            "fixtureProps": { "title": "Hello", "values": [1, 2] }
        }
    });
    std::fs::write(home.join("charts.json"), gadget.to_string()).unwrap();
    std::fs::write(home.join("charts.js"), GADGET_JS).unwrap();
    std::fs::write(home.join("board.json"), blueprint.to_string()).unwrap();
    std::fs::write(home.join("index.tsx"), BLUEPRINT_TSX).unwrap();
    for (manifest, bundle) in [("charts.json", "charts.js"), ("board.json", "index.tsx")] {
        let out = svc(
            &[
                "publish",
                "--registry",
                &base,
                "--manifest",
                manifest,
                "--bundle",
                bundle,
                "--allow-dirty",
            ],
            &home,
            &home,
        )
        .await;
        succeeded(&out, &format!("publish {manifest}"));
        // Piped, the upload draws no progress bar.
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "publish {manifest}: stderr when piped"
        );
    }

    let found = succeeded(
        &svc(&["search", "--registry", &base, "--kind", "gadget"], &home, &home).await,
        "search",
    );
    assert!(
        found.contains("@acme/charts") && !found.contains("@acme/board"),
        "{found}"
    );

    let project = temp_dir("svc-e2e-project");
    std::fs::write(project.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    for artifact in ["@acme/charts@1.0.0", "@acme/board@1.0.0"] {
        let out = svc(&["install", artifact, "--strict"], &home, &project).await;
        succeeded(&out, artifact);
        // Piped, the download draws no progress bar (nor anything else on stderr).
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "{artifact}: stderr when piped"
        );
    }
    progress_is_drawn_on_a_terminal(&home, &base).await;
    let manifest: Value = serde_json::from_slice(&std::fs::read(project.join("svc.json")).unwrap()).unwrap();
    let installed = &manifest["app"]["gadgets"][0];
    assert_eq!(installed["package"], "@acme/charts");
    assert_eq!(installed["version"], "1.0.0");
    assert_eq!(installed["exports"][1]["hook"], "useBars");
    let bundle_url = installed["bundleUrl"].as_str().expect("a bundle URL");
    let served = reqwest::get(bundle_url).await.unwrap().text().await.unwrap();
    assert_eq!(served, GADGET_JS, "the installed URL serves the published bundle");
    let board = project.join(".svc/installed-blueprints/@acme__board__1.0.0");
    assert_eq!(std::fs::read_to_string(board.join("index.tsx")).unwrap(), BLUEPRINT_TSX);
    let ui: Value = serde_json::from_slice(&std::fs::read(board.join("svc.ui.json")).unwrap()).unwrap();
    assert_eq!(ui["contract"], blueprint["blueprint"]["contract"]);

    serve_and_mount_in_chromium(&registry, &project, installed["bundleUrl"].as_str().unwrap());

    let (yanked, _, stderr) = registry.cli(&["yank", "@acme/charts@1.0.0", "--reason", "leaks"]);
    assert!(yanked, "{stderr}");
    let fresh = temp_dir("svc-e2e-fresh");
    std::fs::write(fresh.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    let before = std::fs::read(fresh.join("svc.json")).unwrap();
    let out = svc(&["install", "@acme/charts@1.0.0"], &home, &fresh).await;
    assert_eq!(out.status.code(), Some(1), "a yanked version does not install");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "svc: @acme/charts@1.0.0 was yanked by the registry (leaks); install another version"
    );
    assert_eq!(std::fs::read(fresh.join("svc.json")).unwrap(), before);
}

/// On a terminal the upload of `svc publish` and the download of `svc install` draw their bars:
/// each runs under a pseudo-terminal (util-linux `script`), which records what the terminal got.
async fn progress_is_drawn_on_a_terminal(home: &Path, base: &str) {
    if !Path::new("/usr/bin/script").exists() {
        println!("skipped: the terminal progress check (util-linux `script` is not installed)");
        return;
    }
    std::fs::write(home.join("charts-1.0.1.json"), charts("1.0.1", "private").to_string()).unwrap();
    std::fs::write(home.join("charts-1.0.1.js"), GADGET_JS).unwrap();
    let publish = format!(
        "{BINARY} publish --registry {base} --manifest charts-1.0.1.json --bundle charts-1.0.1.js --allow-dirty"
    );
    let terminal = on_terminal(&publish, home, home).await;
    assert!(
        terminal.contains("sending to /publish"),
        "the terminal shows the upload's progress: {terminal:?}"
    );
    let project = temp_dir("svc-e2e-terminal");
    std::fs::write(project.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    let install = format!("{BINARY} install @acme/charts@1.0.1 --strict");
    let terminal = on_terminal(&install, home, &project).await;
    assert!(
        terminal.contains("fetching "),
        "the terminal shows the download's progress: {terminal:?}"
    );
}

/// What a terminal showed while `command` ran in `cwd` (it must succeed).
async fn on_terminal(command: &str, home: &Path, cwd: &Path) -> String {
    let out = tokio::process::Command::new("/usr/bin/script")
        .args(["--quiet", "--return", "--command", command, "/dev/null"])
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("SVC_REGISTRY_URL")
        .env_remove("SVC_REGISTRY_TOKEN")
        .output()
        .await
        .unwrap();
    let terminal = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{command} on a terminal: {terminal}");
    terminal
}

/// `svc publish` of `manifest` with `bundle` from `home` (the publisher's config and files).
async fn publish(base: &str, home: &Path, manifest: &Value, bundle: &[u8], extra: &[&str]) -> Output {
    let name = manifest["name"].as_str().unwrap();
    let version = manifest["version"].as_str().unwrap();
    let (manifest_file, bundle_file) = (format!("{name}-{version}.json"), format!("{name}-{version}.bundle"));
    std::fs::write(home.join(&manifest_file), manifest.to_string()).unwrap();
    std::fs::write(home.join(&bundle_file), bundle).unwrap();
    let mut args = vec![
        "publish",
        "--registry",
        base,
        "--manifest",
        &manifest_file,
        "--bundle",
        &bundle_file,
        "--allow-dirty",
    ];
    args.extend_from_slice(extra);
    svc(&args, home, home).await
}

fn charts(version: &str, visibility: &str) -> Value {
    json!({
        "kind": "gadget", "scope": "@acme", "name": "charts", "version": version,
        "visibility": visibility, "description": "Sparkline and bar charts", "tags": ["chart"],
        "gadget": { "exports": [
            { "hook": "useSparkline", "description": "a sparkline", "usage": "useSparkline(values)", "example": "useSparkline([1, 2])" },
            { "hook": "useBars", "description": "bars", "usage": "useBars(values)", "example": "useBars([1])" }
        ] }
    })
}

/// A project directory whose svc.json names the registry, and a snapshot to compare it with.
fn project_for(base: &str) -> (PathBuf, Vec<u8>) {
    let project = temp_dir("svc-e2e-refused");
    std::fs::write(project.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    let before = std::fs::read(project.join("svc.json")).unwrap();
    (project, before)
}

/// Exit 1, the message on stderr, and the project exactly as it was (nothing else written).
fn refused(out: &Output, mentions: &str, project: &Path, before: &[u8]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(mentions), "expected {mentions:?} in: {stderr}");
    assert_eq!(std::fs::read(project.join("svc.json")).unwrap(), before);
    let entries: Vec<_> = std::fs::read_dir(project).unwrap().collect();
    assert_eq!(entries.len(), 1, "only svc.json: {entries:?}");
}

/// The refusals a user meets through the CLI against the real registry, each with its exit code
/// and message: republishing (409), a private version without a credential (401), a rotated author
/// key (old versions still install), a public artifact whose Sigstore bundle does not sign it, and
/// a bundle tampered with in the registry's storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_sees_each_refusal_of_the_real_registry() {
    let registry = Registry::spawn("registry_e2e_refusals", svc_tests::Backend::Sqlite)
        .await
        .expect("SQLite always runs");
    let base = registry.base.clone();
    let token = registry.mint("acme", false);
    let home = temp_dir("svc-e2e-refusals");
    succeeded(
        &svc(&["login", "--registry", &base, "--token", &token], &home, &home).await,
        "login",
    );
    succeeded(&svc(&["author-key", "generate"], &home, &home).await, "generate");
    succeeded(
        &svc(&["author-key", "register", "--registry", &base], &home, &home).await,
        "register",
    );
    succeeded(
        &publish(&base, &home, &charts("1.0.0", "private"), GADGET_JS.as_bytes(), &[]).await,
        "publish 1.0.0",
    );

    // Republishing: the registry's 409 with its code, exit 1.
    let out = publish(&base, &home, &charts("1.0.0", "private"), GADGET_JS.as_bytes(), &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the registry answered 409") && stderr.contains("(version_exists)"),
        "{stderr}"
    );

    // A private version without a credential: the registry's 401, nothing written.
    let stranger = temp_dir("svc-e2e-stranger");
    let (project, before) = project_for(&base);
    let out = svc(&["install", "@acme/charts@1.0.0"], &stranger, &project).await;
    refused(&out, "401", &project, &before);

    // Rotation: a new author key signs 1.1.0; 1.0.0 still installs, verified with its own key.
    succeeded(
        &svc(&["author-key", "generate", "--force"], &home, &home).await,
        "generate --force",
    );
    succeeded(
        &svc(&["author-key", "register", "--registry", &base], &home, &home).await,
        "register the new key",
    );
    succeeded(
        &publish(&base, &home, &charts("1.1.0", "private"), GADGET_JS.as_bytes(), &[]).await,
        "publish 1.1.0 with the new key",
    );
    let rotated = temp_dir("svc-e2e-rotated");
    std::fs::write(rotated.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    for version in ["1.0.0", "1.1.0"] {
        succeeded(
            &svc(
                &["install", &format!("@acme/charts@{version}"), "--strict"],
                &home,
                &rotated,
            )
            .await,
            &format!("install {version} after the rotation"),
        );
    }

    // A public artifact with a Sigstore bundle made over another file: this development registry
    // stores it unverified, the installer verifies regardless and refuses it.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sigstore");
    let sigstore_bundle = fixtures.join("bundle_v3.txt.sigstore");
    let mut public = charts("2.0.0", "public");
    public["name"] = json!("dates");
    let out = publish(
        &base,
        &home,
        &public,
        GADGET_JS.as_bytes(),
        &["--sigstore-bundle", sigstore_bundle.to_str().unwrap()],
    )
    .await;
    succeeded(&out, "publish a public artifact");
    let found = succeeded(
        &svc(
            &["search", "--registry", &base, "--author", "acme"],
            &stranger,
            &stranger,
        )
        .await,
        "search without a credential",
    );
    assert!(
        found.contains("@acme/dates") && !found.contains("@acme/charts"),
        "only the public artifact without a credential: {found}"
    );
    let staging_root = fixtures.join("staging-trusted_root.json");
    let (project, before) = project_for(&base);
    let out = svc(
        &[
            "install",
            "@acme/dates@2.0.0",
            "--trusted-root",
            staging_root.to_str().unwrap(),
        ],
        &stranger,
        &project,
    )
    .await;
    refused(
        &out,
        "@acme/dates@2.0.0 did not verify: the Sigstore bundle does not verify",
        &project,
        &before,
    );

    // The registry's stored bundle changed on disk: the first leg refuses it.
    let (status, detail) = registry.get("/pkg/@acme/charts/1.0.0", Some(&token)).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let stored = registry.stored_gadget_bundle(detail["bundleUrl"].as_str().unwrap());
    std::fs::write(&stored, format!("{GADGET_JS}// tampered\n")).unwrap();
    let (project, before) = project_for(&base);
    let out = svc(&["install", "@acme/charts@1.0.0"], &home, &project).await;
    refused(
        &out,
        "@acme/charts@1.0.0 did not verify: the bundle's sha384 is",
        &project,
        &before,
    );
}

/// `svc serve` in the project install wrote (it finds `svc.json` there), then the card in
/// Chromium (`tests/browser/installed-card.mjs`). Skipped without the browser dependencies unless
/// `SVC_REQUIRE_BROWSER=1`.
fn serve_and_mount_in_chromium(registry: &Registry, project: &Path, bundle_url: &str) {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let needed = [
        browser.join("node_modules/playwright-core"),
        PathBuf::from(std::env::var("SVC_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())),
    ];
    let test = "publish_search_install_and_yank_through_the_cli_against_the_real_registry (browser leg)";
    if !deps_present(
        test,
        &needed,
        "SVC_REQUIRE_BROWSER",
        "browser deps",
        "run tests/browser/install.sh",
    ) {
        return;
    }
    let data_dir = temp_dir("svc-e2e-serve");
    let server = ServerProcess::start_in(BINARY, project, &data_dir, &["--dev-allow-all"]);
    let mut command = std::process::Command::new("node");
    command
        .arg(browser.join("installed-card.mjs"))
        .arg(&server.base)
        .env("SVC_PROJECT_DIR", project)
        .env("SVC_BLUEPRINT_ID", "@acme/board@1.0.0")
        .env("SVC_TAMPER_FILE", registry.stored_gadget_bundle(bundle_url))
        .current_dir(&browser);
    let run = run_with_deadline(command, BROWSER_DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    assert!(
        run.succeeded(),
        "installed-card.mjs failed:\n{}{}",
        run.stdout,
        run.stderr
    );
}
