//! Every route has a body ceiling (413 `PAYLOAD_TOO_LARGE`, whether the length is declared or the
//! body is chunked), and the polling POST is under the same flood rule as `/ws` frames.

use futures_util::stream;
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    an_oversized_pair_request_is_refused_with_413,
    an_oversized_polling_frame_is_refused_with_413,
    routes_without_a_limit_of_their_own_have_the_global_ceiling,
    the_polling_post_is_under_the_flood_rule_of_the_socket,
    an_http2_body_of_no_declared_length_has_the_same_ceilings,
);

/// A body of `size` bytes sent chunked: no `Content-Length` for the server to check first.
fn chunked(size: usize) -> reqwest::Body {
    let chunks = (0..size.div_ceil(8192)).map(|_| Ok::<_, std::io::Error>(vec![b' '; 8192]));
    reqwest::Body::wrap_stream(stream::iter(chunks))
}

async fn assert_too_large(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE", "{body}");
}

async fn an_oversized_pair_request_is_refused_with_413(app: TestApp) {
    let url = format!("{}/_svc/pair", app.base);
    let name = "x".repeat(64 * 1024);
    let declared = app
        .client
        .post(&url)
        .json(&json!({ "pairCode": "000000", "clientName": name }))
        .send()
        .await
        .unwrap();
    assert_too_large(declared).await;
    let streamed = app
        .client
        .post(&url)
        .header("content-type", "application/json")
        .body(chunked(64 * 1024))
        .send()
        .await
        .unwrap();
    assert_too_large(streamed).await;
}

/// Renders a card; returns the polling URL with its token.
async fn polling_url(app: &TestApp) -> String {
    let contract = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "go": {} } });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "limits", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let body = app
        .call("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    let slice = &body["result"]["_meta"]["ai.svc/render"];
    format!(
        "{}?token={}",
        slice["pollingUrl"].as_str().unwrap(),
        slice["wsToken"].as_str().unwrap()
    )
}

async fn an_oversized_polling_frame_is_refused_with_413(app: TestApp) {
    let url = polling_url(&app).await;
    let frame = json!({ "type": "host_context_observed", "payload": { "pad": "x".repeat(300 * 1024) } });
    let declared = app.client.post(&url).json(&frame).send().await.unwrap();
    assert_too_large(declared).await;
    let streamed = app
        .client
        .post(&url)
        .header("content-type", "application/json")
        .body(chunked(300 * 1024))
        .send()
        .await
        .unwrap();
    assert_too_large(streamed).await;
}

async fn routes_without_a_limit_of_their_own_have_the_global_ceiling(app: TestApp) {
    let streamed = app
        .client
        .post(format!("{}/_svc/invites/inv_x/accept", app.base))
        .bearer_auth(&app.bearer)
        .header("content-type", "application/json")
        .body(chunked(5 * 1024 * 1024))
        .send()
        .await
        .unwrap();
    assert_too_large(streamed).await;
}

/// HTTP/2 has no chunked encoding: a body sent without `content-length` is read up to the
/// route's ceiling and refused past it, like a chunked HTTP/1.1 body, before any handler (or
/// authentication) reads it.
async fn an_http2_body_of_no_declared_length_has_the_same_ceilings(app: TestApp) {
    let polling = polling_url(&app).await;
    let global = format!("{}/_svc/invites/inv_x/accept", app.base);
    for (url, size) in [(polling, 300 * 1024), (global, 5 * 1024 * 1024)] {
        let (status, text) = svc_tests::h2::post_unsized(&url, "application/json", size)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{url}: {text}");
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE", "{body}");
    }
    // Under the ceiling the body reaches the route as sent: a polling frame that is not JSON is
    // the route's own refusal, not a 413.
    let (status, text) = svc_tests::h2::post_unsized(&polling_url(&app).await, "application/json", 1024)
        .await
        .unwrap();
    assert_ne!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
}

async fn the_polling_post_is_under_the_flood_rule_of_the_socket(app: TestApp) {
    let url = polling_url(&app).await;
    // 100 frames a second pass, the next ones are answered RATE_LIMITED, past 200 the poller is
    // refused with 429. Sent concurrently so that they land within one second.
    let frame = json!({ "type": "ping" });
    let mut sent = tokio::task::JoinSet::new();
    for _ in 0..300 {
        let (client, url, frame) = (app.client.clone(), url.clone(), frame.clone());
        sent.spawn(async move {
            let response = client.post(&url).json(&frame).send().await.unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            (status, body)
        });
    }
    let (mut warned, mut refused) = (0, 0);
    while let Some(answer) = sent.join_next().await {
        let (status, body) = answer.unwrap();
        match status {
            StatusCode::OK if body["frames"][0]["payload"]["code"] == "RATE_LIMITED" => warned += 1,
            StatusCode::OK => assert_eq!(body["frames"][0]["payload"]["code"], "BAD_FRAME", "{body}"),
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(body["error"]["code"], "RATE_LIMITED");
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert!(warned > 0 && refused > 0, "warned {warned}, refused {refused}");
}
