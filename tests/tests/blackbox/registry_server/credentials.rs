//! Credentials: every write needs a valid one, a private version needs one to be read, a sent
//! token must be valid even on a public read, and a publisher owns only its own scope.

use crate::registry_support;

use registry_support::*;

use reqwest::StatusCode;
use serde_json::{Value, json};

crate::on_every_registry_backend!(credentials_guard_writes_and_private_reads);

async fn credentials_guard_writes_and_private_reads(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, GADGET_JS);
    let body = signed_publish(&manifest, GADGET_JS, &author);

    // No credential, or an unknown one: 401 on every write, with the challenge.
    for bearer in [None, Some("svcreg_not-a-token")] {
        let response = registry
            .client
            .post(format!("{}/publish", registry.base))
            .json(&body)
            .header("authorization", bearer.map_or(String::new(), |t| format!("Bearer {t}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"registry\"");
        let refused: Value = response.json().await.unwrap();
        assert_eq!(refused["error"], "unauthorized");
        for path in ["/author-keys", "/conformance/check"] {
            let (status, refused) = registry
                .post(path, bearer, &json!({ "publicKey": author.public_key() }))
                .await;
            assert_eq!(
                (status, refused["error"].as_str()),
                (StatusCode::UNAUTHORIZED, Some("unauthorized")),
                "{path}"
            );
        }
        let (status, _) = registry.get("/whoami", bearer).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    registry.register_key(&token, &author).await;
    let (status, published) = registry.post("/publish", Some(&token), &body).await;
    assert_eq!(status, StatusCode::CREATED);

    // The public reads need no token, but one that is sent must be valid: an unknown token is
    // 401 there too, so a typo never passes for an anonymous read.
    let bundle_path = published["bundleUrl"]
        .as_str()
        .unwrap()
        .strip_prefix(&registry.base)
        .unwrap()
        .to_owned();
    let key_path = format!(
        "/author-keys/{}",
        author.key_id().replace('+', "%2B").replace('/', "%2F")
    );
    for path in [
        key_path.as_str(),
        bundle_path.as_str(),
        "/search",
        "/pkg/@acme/chart/1.0.0",
    ] {
        let response = registry
            .client
            .get(format!("{}{path}", registry.base))
            .bearer_auth("svcreg_not-a-token")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer realm=\"registry\"",
            "{path}"
        );
        let refused: Value = response.json().await.unwrap();
        assert_eq!(refused["error"], "unauthorized", "{path}");
        for bearer in [None, Some(token.as_str())] {
            let status = registry.get(path, bearer).await.0;
            let expected = if bearer.is_none() && path.starts_with("/pkg/") {
                StatusCode::UNAUTHORIZED // a private version
            } else {
                StatusCode::OK
            };
            assert_eq!(status, expected, "{path} with {bearer:?}");
        }
    }

    // A private version: 401 without a credential, readable with any valid one.
    for path in ["/pkg/@acme/chart/1.0.0", "/pkg/@acme/chart"] {
        let (status, refused) = registry.get(path, None).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("unauthorized")),
            "{path}"
        );
    }
    let reader = registry.mint("someone", false);
    let (status, _) = registry.get("/pkg/@acme/chart/1.0.0", Some(&reader)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = registry.get("/pkg/@acme/chart/1.0.0", Some("svcreg_wrong")).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );

    // A publisher owns only its own scope.
    let manifest = gadget_manifest("@acme", "chart", "2.0.0", &author, GADGET_JS);
    let (status, refused) = registry
        .post(
            "/publish",
            Some(&reader),
            &signed_publish(&manifest, GADGET_JS, &author),
        )
        .await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, refused) = registry.get("/nowhere", None).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}
