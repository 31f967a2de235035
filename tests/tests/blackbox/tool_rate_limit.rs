//! The tool-call limiter (Document 2, Errors): off unless configured; when wired, a limited tool
//! call is an error result with code `rate_limited` and `retryAfterMs`, never HTTP 429.

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend, TestApp, on_both_backends};

on_both_backends!(
    the_call_over_the_limit_is_an_error_result_with_retry_after_ms,
    without_a_limiter_tool_calls_are_unlimited,
);

async fn limited(test: &str, backend: Backend, calls: u32) -> Option<TestApp> {
    TestApp::spawn_configured(test, backend, Auth::DevAllowAll, |s| {
        s.tool_calls.calls_per_window = calls;
        s.tool_calls.window_seconds = 60;
    })
    .await
}

async fn the_call_over_the_limit_is_an_error_result_with_retry_after_ms(backend: Backend) {
    let Some(app) = limited("tool_limit", backend, 3).await else {
        return;
    };
    for _ in 0..3 {
        app.tool_ok("svc_list_themes", json!({})).await;
    }
    let (status, body) = app
        .rpc("tools/call", json!({ "name": "svc_list_themes", "arguments": {} }))
        .await;
    assert_eq!(status, StatusCode::OK, "never HTTP 429: {body}");
    assert!(body.get("error").is_none(), "not a JSON-RPC error: {body}");
    let result = &body["result"];
    assert_eq!(result["isError"], true, "{body}");
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], "rate_limited", "{body}");
    let retry_after_ms = error["retryAfterMs"].as_u64().expect("retryAfterMs is a number");
    assert!((1..=60_000).contains(&retry_after_ms), "{retry_after_ms}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("rate_limited")
    );

    // Every tool shares the identity's budget; the protocol's own methods are not tool calls.
    let render = app
        .call(
            "svc_handshake",
            json!({ "intent": "x", "blueprintDraft": { "contract": {} } }),
        )
        .await;
    assert_eq!(render["result"]["structuredContent"]["error"]["code"], "rate_limited");
    let (status, listed) = app.rpc("tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let (status, init) = app
        .rpc(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "clientInfo": { "name": "t", "version": "1" }, "capabilities": {} }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
}

async fn without_a_limiter_tool_calls_are_unlimited(backend: Backend) {
    let Some(app) = limited("tool_limit_off", backend, 0).await else {
        return;
    };
    for _ in 0..25 {
        app.tool_ok("svc_list_themes", json!({})).await;
    }
}
