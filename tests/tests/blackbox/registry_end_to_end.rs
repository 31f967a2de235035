//! The registry CLI against the real registry server (`svc registry serve`'s application, on
//! SQLite): a publisher logs in with a minted token, generates and registers an author key,
//! publishes a private gadget and a private blueprint, searches, and installs both into a fresh
//! project, where install verifies each against the key that signed it; a yanked version then
//! fails to install and leaves the project as it was.

use crate::registry_support;

use std::path::Path;
use std::process::Output;

use registry_support::{BLUEPRINT_TSX, GADGET_JS, Registry};
use serde_json::{Value, json};
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

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
            "contract": { "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } },
            "entryPoint": "index.tsx",
            "fixtureProps": { "title": "Hello" }
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
        succeeded(
            &svc(&["install", artifact, "--strict"], &home, &project).await,
            artifact,
        );
    }
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

    let (yanked, _, stderr) = registry.cli(&["yank", "@acme/charts@1.0.0", "--reason", "leaks"]);
    assert!(yanked, "{stderr}");
    let fresh = temp_dir("svc-e2e-fresh");
    std::fs::write(fresh.join("svc.json"), json!({ "registry": base }).to_string()).unwrap();
    let before = std::fs::read(fresh.join("svc.json")).unwrap();
    let out = svc(&["install", "@acme/charts@1.0.0"], &home, &fresh).await;
    assert_eq!(out.status.code(), Some(1), "a yanked version does not install");
    assert!(String::from_utf8_lossy(&out.stderr).contains("yanked"));
    assert_eq!(std::fs::read(fresh.join("svc.json")).unwrap(), before);
}
