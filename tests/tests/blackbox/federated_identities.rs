//! Federated identities on `/apps/<appId>/mcp` (Document 1, "Endpoint-level refusal"): a JWT
//! from the app's federation issuer (set with `svc apps configure`) is verified against the
//! issuer's keys, found by OpenID Connect discovery or an explicit JWKS URL, on a loopback issuer
//! this test runs with keys it makes. The classic attacks are refused, key rotation is followed
//! on an unknown kid without letting made-up kids hammer the issuer, and the refusals come in the
//! spec's order. On SQLite and PostgreSQL.

use crate::federation_support;
use crate::ops_support;

use federation_support::{Issuer, SigningKey, claims, configure_app, hs256_token, now_seconds, unsigned_token};
use jsonwebtoken::Algorithm;
use ops_support::{BINARY, Client, app_with_prompt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_both_backends};

on_both_backends!(
    tokens_of_the_apps_issuer_are_served_for_each_algorithm,
    the_classic_attacks_are_refused,
    an_unknown_kid_is_followed_to_the_rotated_key_set_at_most_once_per_floor,
    refusals_come_in_the_specs_order,
);

/// A strict server whose JWKS refresh floor is one second (the rotation test waits it out).
async fn server(test: &str, backend: Backend) -> Option<TestApp> {
    TestApp::spawn_configured(test, backend, Auth::Strict, |s| {
        s.federation.jwks_refresh_floor_seconds = 1;
    })
    .await
}

fn path(app_id: &str) -> String {
    format!("/apps/{app_id}/mcp")
}

/// Calls `method` on the app's endpoint with `bearer`.
async fn call(app: &TestApp, app_id: &str, bearer: &str, method: &str, params: Value) -> (StatusCode, Value) {
    let client = Client::with_bearer(app, bearer);
    let (status, _, body) = client.post(&path(app_id), method, params).await;
    (status, body)
}

async fn initialize(app: &TestApp, app_id: &str, bearer: &str) -> (StatusCode, Value) {
    call(
        app,
        app_id,
        bearer,
        "initialize",
        json!({ "protocolVersion": "2025-06-18" }),
    )
    .await
}

fn assert_bare(status: StatusCode, body: &Value, expected: StatusCode, case: &str) {
    assert_eq!(status, expected, "{case}: {body}");
    assert_eq!(body["error"]["code"], -32007, "{case}: {body}");
    assert!(
        body["error"].get("data").is_none(),
        "{case}: a bare denial carries no data: {body}"
    );
}

/// A new app of the strict server's owner; its id.
async fn new_app(app: &TestApp, name: &str) -> String {
    let id = app_with_prompt(&Client::of(app), name, "x").await;
    id.as_str().unwrap().to_owned()
}

fn database(app: &TestApp) -> String {
    app.settings.database_url()
}

async fn tokens_of_the_apps_issuer_are_served_for_each_algorithm(backend: Backend) {
    let Some(app) = server("federated_algorithms", backend).await else {
        return;
    };
    let rs = SigningKey::generate(Algorithm::RS256, "rs-1");
    let es = SigningKey::generate(Algorithm::ES256, "es-1");
    let ed = SigningKey::generate(Algorithm::EdDSA, "ed-1");
    let issuer = Issuer::start(&[&rs, &es, &ed]).await;

    // Found by discovery on one app, by an explicit JWKS URL on the other.
    let discovered = new_app(&app, "Discovered").await;
    let printed = configure_app(
        BINARY,
        &database(&app),
        &discovered,
        &["--auth-mode", "federated", "--federation-issuer", &issuer.url],
    );
    assert!(printed.contains("auth_mode: federated"), "{printed}");
    let explicit = new_app(&app, "Explicit").await;
    configure_app(
        BINARY,
        &database(&app),
        &explicit,
        &[
            "--auth-mode",
            "both",
            "--federation-issuer",
            &issuer.url,
            "--jwks-url",
            &issuer.jwks_url(),
        ],
    );

    for app_id in [&discovered, &explicit] {
        for key in [&rs, &es, &ed] {
            let token = key.sign(&claims(&issuer.url, app_id, "user-1"));
            let (status, body) = initialize(&app, app_id, &token).await;
            assert_eq!(status, StatusCode::OK, "{:?} on {app_id}: {body}", key.alg);
            assert!(body["result"]["instructions"].is_string(), "{body}");
        }
    }

    // A federated caller renders through the endpoint; the render is the app's.
    let token = es.sign(&claims(&issuer.url, &explicit, "user-2"));
    let client = Client::with_bearer(&app, &token);
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "t": { "type": "string" } } } });
    let (_, _, hs) = client
        .post(
            &path(&explicit),
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": "federated card", "blueprintDraft": { "contract": contract } } }),
        )
        .await;
    let handshake_id = hs["result"]["structuredContent"]["handshakeId"].clone();
    assert!(handshake_id.is_string(), "{hs}");
    let (_, _, rendered) = client
        .post(
            &path(&explicit),
            "tools/call",
            json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { "t": "hi" } } }),
        )
        .await;
    assert_eq!(
        rendered["result"]["structuredContent"]["outcome"], "rendered",
        "{rendered}"
    );
    let session = rendered["result"]["structuredContent"]["sessionId"].clone();
    let (_, owners) = call(
        &app,
        &explicit,
        &app.bearer,
        "tools/call",
        json!({ "name": "svc_list_sessions", "arguments": {} }),
    )
    .await;
    let listed: Vec<&Value> = owners["result"]["structuredContent"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(
        listed,
        [&session],
        "the owner's native key sees the app's render (auth mode both)"
    );
}

async fn the_classic_attacks_are_refused(backend: Backend) {
    let Some(app) = server("federated_attacks", backend).await else {
        return;
    };
    let rs = SigningKey::generate(Algorithm::RS256, "rs-1");
    let es = SigningKey::generate(Algorithm::ES256, "es-1");
    let stranger = SigningKey::generate(Algorithm::ES256, "es-1");
    let issuer = Issuer::start(&[&rs, &es]).await;
    let other_issuer = Issuer::start(&[&es]).await;
    let app_id = new_app(&app, "Attacked").await;
    let other_app = new_app(&app, "Neighbour").await;
    configure_app(
        BINARY,
        &database(&app),
        &app_id,
        &["--auth-mode", "federated", "--federation-issuer", &issuer.url],
    );
    let good = claims(&issuer.url, &app_id, "user-1");
    let (status, body) = initialize(&app, &app_id, &es.sign(&good)).await;
    assert_eq!(status, StatusCode::OK, "the control token is served: {body}");

    let mut expired = good.clone();
    expired["exp"] = json!(now_seconds() - 3600);
    expired["nbf"] = json!(now_seconds() - 7200);
    let mut not_yet = good.clone();
    not_yet["nbf"] = json!(now_seconds() + 3600);
    let mut no_exp = good.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    let mut oversized = good.clone();
    oversized["padding"] = json!("x".repeat(10_000));
    let invalid: Vec<(&str, String)> = vec![
        ("alg none", unsigned_token(&good)),
        (
            "HS256 signed with the public key",
            hs256_token(&rs.public_pem, &rs.kid, &good),
        ),
        ("HS256 signed with the JWK's modulus", {
            let n = serde_json::to_value(&rs.jwk).unwrap()["n"].as_str().unwrap().to_owned();
            hs256_token(n.as_bytes(), &rs.kid, &good)
        }),
        ("expired", es.sign(&expired)),
        ("not yet valid", es.sign(&not_yet)),
        ("no exp", es.sign(&no_exp)),
        ("another key under a published kid", es.sign_as(&stranger, &good)),
        ("ES256 header on the RSA key", rs.sign_as(&es, &good)),
        ("oversized", es.sign(&oversized)),
        ("tampered payload", {
            let token = es.sign(&good);
            let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
            let mut forged = good.clone();
            forged["sub"] = json!("admin");
            use base64::Engine;
            parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(forged.to_string());
            parts.join(".")
        }),
    ];
    for (case, token) in invalid {
        let (status, body) = initialize(&app, &app_id, &token).await;
        assert_bare(status, &body, StatusCode::UNAUTHORIZED, case);
    }

    // Bound elsewhere or to a foreign issuer: a bare 403.
    let (status, body) = initialize(&app, &app_id, &es.sign(&claims(&issuer.url, &other_app, "user-1"))).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN, "wrong audience");
    let (status, body) = initialize(&app, &app_id, &es.sign(&claims(&other_issuer.url, &app_id, "user-1"))).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN, "wrong issuer");
    let other_fetches = other_issuer.jwks_fetches();
    assert_eq!(other_fetches, 0, "a foreign issuer's keys are never fetched");
}

async fn an_unknown_kid_is_followed_to_the_rotated_key_set_at_most_once_per_floor(backend: Backend) {
    let Some(app) = server("federated_rotation", backend).await else {
        return;
    };
    let old = SigningKey::generate(Algorithm::ES256, "2026-old");
    let new = SigningKey::generate(Algorithm::EdDSA, "2026-new");
    let issuer = Issuer::start(&[&old]).await;
    let app_id = new_app(&app, "Rotating").await;
    configure_app(
        BINARY,
        &database(&app),
        &app_id,
        &[
            "--auth-mode",
            "federated",
            "--federation-issuer",
            &issuer.url,
            "--jwks-url",
            &issuer.jwks_url(),
        ],
    );
    let token_old = old.sign(&claims(&issuer.url, &app_id, "user-1"));
    let token_new = new.sign(&claims(&issuer.url, &app_id, "user-1"));
    assert_eq!(initialize(&app, &app_id, &token_old).await.0, StatusCode::OK);
    let (status, body) = initialize(&app, &app_id, &token_new).await;
    assert_bare(
        status,
        &body,
        StatusCode::UNAUTHORIZED,
        "a kid the issuer does not publish",
    );

    // A burst of made-up kids within the floor fetches the key set at most once more.
    let before = issuer.jwks_fetches();
    for n in 0..10 {
        let mut forged = new.clone();
        forged.kid = format!("made-up-{n}");
        let (status, _) = initialize(&app, &app_id, &forged.sign(&claims(&issuer.url, &app_id, "u"))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert!(
        issuer.jwks_fetches() - before <= 1,
        "fetches: {}",
        issuer.jwks_fetches() - before
    );

    // The issuer rotates; past the floor the new kid is fetched and served, the old one gone.
    issuer.publish(&[&new]);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, body) = initialize(&app, &app_id, &token_new).await;
    assert_eq!(status, StatusCode::OK, "the rotated key is used: {body}");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, body) = initialize(&app, &app_id, &token_old).await;
    assert_bare(status, &body, StatusCode::UNAUTHORIZED, "a retired key");
}

async fn refusals_come_in_the_specs_order(backend: Backend) {
    let Some(app) = server("federated_order", backend).await else {
        return;
    };
    let key = SigningKey::generate(Algorithm::ES256, "k1");
    let issuer = Issuer::start(&[&key]).await;
    let ops = Client::of(&app);
    let app_id = new_app(&app, "Ordered").await;
    let native_only = new_app(&app, "Native only").await;

    // No issuer: a bare 403, for a well-signed token too.
    let token = key.sign(&claims(&issuer.url, &native_only, "user-1"));
    let (status, body) = initialize(&app, &native_only, &token).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN, "no issuer");

    configure_app(
        BINARY,
        &database(&app),
        &app_id,
        &[
            "--auth-mode",
            "federated",
            "--federation-issuer",
            &issuer.url,
            "--deny-subject",
            "banned",
        ],
    );
    let banned = key.sign(&claims(&issuer.url, &app_id, "banned"));
    let (status, body) = initialize(&app, &app_id, &banned).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN, "denied subject on a live app");
    let (status, body) = initialize(&app, &app_id, &app.bearer).await;
    assert_bare(
        status,
        &body,
        StatusCode::FORBIDDEN,
        "a native key on a federated-only app",
    );
    let (status, body) = Client::anonymous(&app)
        .post(&path(&app_id), "initialize", json!({}))
        .await
        .into_parts();
    assert_bare(status, &body, StatusCode::UNAUTHORIZED, "anonymous");
    // Bound to another app: refused before any lookup, even of an app that does not exist.
    let elsewhere = key.sign(&claims(&issuer.url, "SomeOtherApp0000", "user-1"));
    let (status, body) = initialize(&app, "NoSuchApp0000000", &elsewhere).await;
    assert_bare(status, &body, StatusCode::FORBIDDEN, "bound to another app");

    // Deprovisioned: the refusal comes before the subject's deny status is read.
    ops.ok("svc_ops_delete_app", json!({ "appId": app_id })).await;
    for token in [&banned, &key.sign(&claims(&issuer.url, &app_id, "user-1"))] {
        let (status, body) = call(&app, &app_id, token, "tools/list", json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["error"]["code"], -32003, "{body}");
        let refusal = &body["error"]["data"]["refusal"];
        assert_eq!(refusal["code"], "app_deprovisioned", "{body}");
        assert_eq!(refusal["retry"], "never");
        assert_eq!(refusal["appId"], app_id.as_str());
        assert!(refusal.get("fixBy").is_none(), "{body}");
    }
}

/// `(status, headers, body)` without the headers.
trait IntoParts {
    fn into_parts(self) -> (StatusCode, Value);
}

impl IntoParts for (StatusCode, reqwest::header::HeaderMap, Value) {
    fn into_parts(self) -> (StatusCode, Value) {
        (self.0, self.2)
    }
}
