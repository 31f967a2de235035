//! `svc search`: without a registry it says how to name one; with one it sends the filters and
//! prints a line per artifact.

use serde_json::json;
use svc_tests::temp_dir;

use crate::registry_cli::support::{BINARY, fake_registry, stderr, stdout, svc};

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
