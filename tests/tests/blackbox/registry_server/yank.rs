//! A version is published once: republishing is 409 (build metadata included), and a yanked
//! version answers 410 with its manifest and stays taken.

use crate::registry_support;

use registry_support::*;

use reqwest::StatusCode;
use serde_json::json;

crate::on_every_registry_backend!(republishing_is_409_and_a_yanked_version_is_410_with_its_manifest);

async fn republishing_is_409_and_a_yanked_version_is_410_with_its_manifest(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, GADGET_JS);
    let body = signed_publish(&manifest, GADGET_JS, &author);
    let (status, _) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, refused) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::CONFLICT, Some("version_exists"))
    );
    // Build metadata does not make another version (SemVer 2.0.0 §10): `1.0.0+fix` is 1.0.0.
    let republish_as = |version: &str| {
        let manifest = gadget_manifest("@acme", "chart", version, &author, GADGET_JS);
        signed_publish(&manifest, GADGET_JS, &author)
    };
    let (status, refused) = registry
        .post("/publish", Some(&token), &republish_as("1.0.0+fix"))
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::CONFLICT, Some("version_exists")),
        "{refused}"
    );
    assert!(
        refused["message"].as_str().unwrap().starts_with(
            "@acme/chart@1.0.0 already exists and @acme/chart@1.0.0+fix differs from it only in build metadata"
        ),
        "{refused}"
    );
    let (status, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listing["versions"].as_array().map(Vec::len), Some(1), "{listing}");

    // Only an admin yanks over HTTP.
    let yank = json!({ "scope": "@acme", "name": "chart", "version": "1.0.0", "reason": "leaks" });
    let (status, refused) = registry.post("/admin/yank", Some(&token), &yank).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );

    // `svc registry yank` on the registry host.
    let (ok, stdout, stderr) = registry.cli(&["yank", "@acme/chart@1.0.0", "--reason", "leaks the token"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("yanked @acme/chart@1.0.0"), "{stdout}");
    let (status, gone) = registry.get("/pkg/@acme/chart/1.0.0", Some(&token)).await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(gone["error"], "version_yanked");
    assert_eq!(gone["reason"], "leaks the token");
    assert_eq!(gone["manifest"], manifest);
    let (_, listing) = registry.get("/pkg/@acme/chart", Some(&token)).await;
    assert_eq!(listing["versions"][0]["yanked"], true);
    let (_, search) = registry.get("/search?author=acme", Some(&token)).await;
    assert_eq!(
        search["results"],
        json!([]),
        "a package with only yanked versions is not listed"
    );

    // Yanked, never deleted: the triple stays taken, with or without build metadata.
    for body in [body.clone(), republish_as("1.0.0+rebuilt")] {
        let (status, refused) = registry.post("/publish", Some(&token), &body).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (StatusCode::CONFLICT, Some("version_exists")),
            "{refused}"
        );
    }

    // Yanking again keeps the first reason.
    let admin = registry.mint("root", true);
    let (status, answer) = registry.post("/admin/yank", Some(&admin), &yank).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        (answer["alreadyYanked"].as_bool(), answer["reason"].as_str()),
        (Some(true), Some("leaks the token"))
    );
    let unknown = json!({ "scope": "@acme", "name": "chart", "version": "3.0.0", "reason": "x" });
    let (status, refused) = registry.post("/admin/yank", Some(&admin), &unknown).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (ok, _, stderr) = registry.cli(&["yank", "@acme/chart@latest", "--reason", "x"]);
    assert!(!ok);
    assert!(stderr.contains("invalid version \"latest\""), "{stderr}");
}
