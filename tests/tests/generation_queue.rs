//! The bounded generation queue: saturation answers HTTP 503, `Retry-After` and -32014, and the
//! refused render's handshake stays usable.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saturated_queue_answers_503_with_retry_after() {
    let app = TestApp::spawn_configured("queue", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
    })
    .await
    .unwrap();
    // Cold renders of distinct intents race for the single slot; rounds repeat until one collides.
    for round in 0..5 {
        let mut handshakes = vec![];
        for i in 0..40 {
            let hs = app
                .tool_ok(
                    "svc_handshake",
                    json!({ "intent": format!("card {round}-{i}"), "blueprintDraft": { "contract": {} } }),
                )
                .await;
            handshakes.push(hs["handshakeId"].as_str().unwrap().to_owned());
        }
        let renders = handshakes.iter().map(|id| {
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_render", "arguments": { "handshakeId": id, "props": {} } } });
            let request = app.client.post(app.mcp_url()).bearer_auth("dev").json(&body).send();
            async move {
                let resp = request.await.unwrap();
                let status = resp.status();
                let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
                (status, retry_after, resp.json::<Value>().await.unwrap())
            }
        });
        let results = futures_util::future::join_all(renders).await;
        let Some(index) = results
            .iter()
            .position(|(status, ..)| *status == StatusCode::SERVICE_UNAVAILABLE)
        else {
            continue;
        };
        let (_, retry_after, body) = &results[index];
        assert!(
            retry_after.as_deref().is_some_and(|s| s.parse::<u64>().unwrap() >= 1),
            "{retry_after:?}"
        );
        assert_eq!(body["error"]["code"], -32014);
        // Nothing was consumed: the same handshake renders once the queue drains.
        let again = app
            .tool_ok("svc_render", json!({ "handshakeId": handshakes[index], "props": {} }))
            .await;
        assert_eq!(again["outcome"], "rendered");
        return;
    }
    panic!("40 concurrent cold renders never saturated a queue of one slot in 5 rounds");
}
