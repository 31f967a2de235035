//! The agent sees a render's progress (issue 12): a `svc_render` carrying `_meta.progressToken`
//! from a client that accepts `text/event-stream` is answered as an SSE stream of
//! `notifications/progress` (one per generation stage, increasing) and then the JSON-RPC
//! response; without the token, or from a JSON-only client, the answer stays plain JSON. The
//! official SDK clients' side is in tests/peers (ts-sdk-client.mjs, python_sdk_client.py).

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

async fn handshake(app: &TestApp, intent: &str) -> String {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": { "propsSpec": { "type": "object" } } } }),
        )
        .await;
    hs["handshakeId"].as_str().unwrap().to_owned()
}

fn render_request(handshake_id: &str, meta: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": {} }, "_meta": meta } })
    .to_string()
}

/// POSTs `body` with `accept`; returns the content type and the raw body.
async fn post(app: &TestApp, accept: &str, body: String) -> (String, String) {
    let response = app
        .client
        .post(app.mcp_url())
        .bearer_auth(&app.bearer)
        .header("content-type", "application/json")
        .header("accept", accept)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    (content_type, response.text().await.unwrap())
}

/// The JSON messages of an SSE body, in order.
fn sse_messages(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data.join("\n")).expect("JSON data"))
        })
        .collect()
}

async fn a_generating_render_streams_its_stages_then_the_result(app: TestApp) {
    let id = handshake(&app, "progress streamed").await;
    let (content_type, body) = post(
        &app,
        "application/json, text/event-stream",
        render_request(&id, json!({ "progressToken": "tok-1" })),
    )
    .await;
    assert!(content_type.starts_with("text/event-stream"), "{content_type}");
    let messages = sse_messages(&body);
    let (last, notifications) = messages.split_last().expect("messages");
    assert_eq!(last["id"], 7, "{body}");
    assert_eq!(last["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    assert!(
        notifications
            .iter()
            .all(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "tok-1"),
        "{body}"
    );
    let stages: Vec<&str> = notifications
        .iter()
        .map(|n| n["params"]["message"].as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(stages.first(), Some(&"queued"), "{stages:?}");
    assert_eq!(stages.last(), Some(&"done"), "{stages:?}");
    assert!(stages.contains(&"compiling"), "{stages:?}");
    let numbers: Vec<f64> = notifications
        .iter()
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|pair| pair[1] > pair[0]), "{numbers:?}");
}

async fn without_a_token_or_a_stream_the_answer_is_plain_json(app: TestApp) {
    let id = handshake(&app, "progress not asked for").await;
    let (content_type, body) = post(
        &app,
        "application/json, text/event-stream",
        render_request(&id, json!({})),
    )
    .await;
    assert!(content_type.starts_with("application/json"), "{content_type}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["structuredContent"]["outcome"],
        "rendered"
    );

    let id = handshake(&app, "progress from a JSON-only client").await;
    let (content_type, body) = post(
        &app,
        "application/json",
        render_request(&id, json!({ "progressToken": 3 })),
    )
    .await;
    assert!(content_type.starts_with("application/json"), "{content_type}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["structuredContent"]["outcome"],
        "rendered"
    );

    // A token longer than 256 characters is not repeated in a notification per stage: the
    // render is answered plain. One of 256 still streams.
    for (length, streamed) in [(257, false), (256, true)] {
        let id = handshake(&app, &format!("progress with a token of {length} characters")).await;
        let (content_type, body) = post(
            &app,
            "application/json, text/event-stream",
            render_request(&id, json!({ "progressToken": "t".repeat(length) })),
        )
        .await;
        assert_eq!(
            content_type.starts_with("text/event-stream"),
            streamed,
            "{length}: {content_type}"
        );
        let answer = if streamed {
            sse_messages(&body).pop().unwrap()
        } else {
            serde_json::from_str::<Value>(&body).unwrap()
        };
        assert_eq!(answer["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    }
}

async fn a_cache_hit_streams_the_result_alone(app: TestApp) {
    let first = handshake(&app, "progress of a reuse").await;
    post(&app, "application/json", render_request(&first, json!({}))).await;
    let again = handshake(&app, "progress of a reuse").await;
    let (content_type, body) = post(
        &app,
        "application/json, text/event-stream",
        render_request(&again, json!({ "progressToken": "tok-2" })),
    )
    .await;
    assert!(content_type.starts_with("text/event-stream"), "{content_type}");
    let messages = sse_messages(&body);
    assert_eq!(messages.len(), 1, "{body}");
    assert_eq!(
        messages[0]["result"]["structuredContent"]["cache"]["hit"], true,
        "{body}"
    );
}

on_every_backend!(Auth::DevAllowAll =>
    a_generating_render_streams_its_stages_then_the_result,
    without_a_token_or_a_stream_the_answer_is_plain_json,
    a_cache_hit_streams_the_result_alone
);
