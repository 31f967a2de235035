//! The per-app render rate (`svc apps configure --rate-limit-per-minute N`): the render past N in
//! a minute is refused with `app_rate_limited` (retry `next-period`, handshake intact), counted
//! in the database so two replicas share one count; apps without a rate, and other apps, are
//! not limited. Two replicas on PostgreSQL; one server on SQLite.

use crate::federation_support;
use crate::ops_support;

use federation_support::configure_app;
use ops_support::{BINARY, Client, app_with_prompt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_both_backends};

on_both_backends!(renders_past_the_apps_rate_are_refused_on_every_replica);

/// Handshake then render through `base`'s endpoint of `app_id`; the render's structuredContent.
async fn render(app: &TestApp, base: &str, app_id: &str, title: &str) -> (Value, Value) {
    let client = Client {
        base: base.to_owned(),
        ..Client::of(app)
    };
    let path = format!("/apps/{app_id}/mcp");
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "t": { "type": "string" } } } });
    let (status, _, hs) = client
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": "rate limited card", "blueprintDraft": { "contract": contract } } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{hs}");
    let handshake_id = hs["result"]["structuredContent"]["handshakeId"].clone();
    let (status, _, rendered) = client
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { "t": title } } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "a refusal is a tool result: {rendered}");
    (handshake_id, rendered["result"].clone())
}

async fn renders_past_the_apps_rate_are_refused_on_every_replica(backend: Backend) {
    // Keys-file keys are per replica; under --dev-allow-all every bearer is `builder` on both.
    let Some(app) = TestApp::spawn("app_rate_limit", backend, Auth::DevAllowAll).await else {
        return;
    };
    // A second replica on a server database; SQLite has one server, counted the same way.
    let replica = match backend {
        Backend::Postgres | Backend::Mariadb => Some(app.replica().await),
        Backend::Sqlite => None,
    };
    let bases = [
        app.base.clone(),
        replica.as_ref().map_or(app.base.clone(), |r| r.base.clone()),
    ];
    let ops = Client::of(&app);
    let limited = app_with_prompt(&ops, "Limited", "x").await.as_str().unwrap().to_owned();
    let free = app_with_prompt(&ops, "Free", "x").await.as_str().unwrap().to_owned();
    let printed = configure_app(
        BINARY,
        &app.settings.database_url(),
        &limited,
        &["--rate-limit-per-minute", "3"],
    );
    assert!(printed.contains("rate_limit_per_minute: 3"), "{printed}");

    for n in 0..3 {
        let (_, result) = render(&app, &bases[n % 2], &limited, &format!("card {n}")).await;
        assert_eq!(
            result["structuredContent"]["outcome"], "rendered",
            "render {n}: {result}"
        );
    }
    for base in &bases {
        let (handshake_id, result) = render(&app, base, &limited, "one too many").await;
        assert_eq!(result["isError"], true, "{result}");
        let body = &result["structuredContent"];
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["outcome", "refusal"], "nothing beside the refusal: {body}");
        assert_eq!(body["outcome"], "refused");
        let refusal = &body["refusal"];
        assert_eq!(refusal["code"], "app_rate_limited", "{body}");
        assert_eq!(refusal["retry"], "next-period");
        assert_eq!(refusal["handshake"], "intact");
        assert!(
            refusal["message"]
                .as_str()
                .is_some_and(|m| m.contains("3 renders per minute")),
            "{body}"
        );
        assert!(refusal["fix"].as_str().is_some_and(|f| !f.is_empty()), "{body}");
        // The refused handshake is still pending: rendering it again is refused again, not
        // answered as a used handshake.
        let client = Client {
            base: base.clone(),
            ..Client::of(&app)
        };
        let (_, _, again) = client
            .post(
                &format!("/apps/{limited}/mcp"),
                "tools/call",
                json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { "t": "x" } } }),
            )
            .await;
        assert_eq!(
            again["result"]["structuredContent"]["refusal"]["code"], "app_rate_limited",
            "{again}"
        );
    }
    for n in 0..4 {
        let (_, result) = render(&app, &bases[n % 2], &free, "free").await;
        assert_eq!(
            result["structuredContent"]["outcome"], "rendered",
            "an app without a rate is not limited: {result}"
        );
    }
}
