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

/// Deterministic saturation with a language-model generation held at a paused fake provider: one
/// render runs, one waits, the third is refused; once the provider answers, the waiter
/// renders too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_runs_one_waits_the_next_is_refused_with_a_held_provider() {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};

    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(
        "export default function Card() { return <p style={{ color: 'var(--svc-color-fg)' }}>ok</p>; }",
    ));
    fake.pause();
    let base = format!("{}/v1", fake.base_url);
    let app = TestApp::spawn_configured("queue_held", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 1;
        s.generation.max_wait_seconds = 30;
        let openai = s.generation.providers.get_mut("openai").unwrap();
        openai.base_url = base;
        openai.api_key = "sk-test".into();
    })
    .await
    .unwrap();
    let mut handshakes = vec![];
    for i in 0..3 {
        let hs = app
            .tool_ok(
                "svc_handshake",
                json!({ "intent": format!("held {i}"), "blueprintDraft": { "contract": {} } }),
            )
            .await;
        handshakes.push(hs["handshakeId"].as_str().unwrap().to_owned());
    }
    let render = |id: &str| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_render",
                           "arguments": { "handshakeId": id, "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } } } });
        let request = app.client.post(app.mcp_url()).bearer_auth("dev").json(&body).send();
        async move {
            let resp = request.await.unwrap();
            let status = resp.status();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            (status, retry_after, resp.json::<Value>().await.unwrap())
        }
    };
    let running = tokio::spawn(render(&handshakes[0]));
    fake.wait_for_requests(1).await;
    let waiting = tokio::spawn(render(&handshakes[1]));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (status, retry_after, body) = render(&handshakes[2]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry_after.as_deref(), Some("30"));
    assert_eq!(body["error"]["code"], -32014);
    // The same render asking for progress (as the official SDKs do with `onprogress`) is refused
    // the same way, not inside an event stream that already said 200.
    let streamed = app
        .client
        .post(app.mcp_url())
        .bearer_auth("dev")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "svc_render",
            "arguments": { "handshakeId": handshakes[2], "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } },
            "_meta": { "progressToken": "full" } } }),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(streamed.headers()["retry-after"], "30");
    assert!(
        streamed.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"),
        "{:?}",
        streamed.headers()
    );
    let body: Value = streamed.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32014, "{body}");
    assert_eq!(body["id"], 2);
    assert_eq!(fake.request_count(), 1, "the waiter has not reached the provider");

    fake.resume();
    for handle in [running, waiting] {
        let (status, _, body) = handle.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    }
    // The refused handshake is intact and renders now that the queue is free.
    let again = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": handshakes[2], "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } }),
        )
        .await;
    assert_eq!(again["outcome"], "rendered");
}

/// `notifications/cancelled` for a render waiting on its provider frees the slot at once: the
/// cancelled request answers -32800, the next render is admitted (not refused) and reaches the
/// provider, and the cancelled render's handshake is still renderable.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_render_frees_its_generation_slot() {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};

    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(
        "export default function Card() { return <p style={{ color: 'var(--svc-color-fg)' }}>ok</p>; }",
    ));
    fake.pause();
    let base = format!("{}/v1", fake.base_url);
    let app = TestApp::spawn_configured("queue_cancel", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
        let openai = s.generation.providers.get_mut("openai").unwrap();
        openai.base_url = base;
        openai.api_key = "sk-test".into();
    })
    .await
    .unwrap();
    let mut handshakes = vec![];
    for i in 0..2 {
        let hs = app
            .tool_ok(
                "svc_handshake",
                json!({ "intent": format!("cancel {i}"), "blueprintDraft": { "contract": {} } }),
            )
            .await;
        handshakes.push(hs["handshakeId"].as_str().unwrap().to_owned());
    }
    let post = |body: Value| {
        let request = app.client.post(app.mcp_url()).bearer_auth("dev").json(&body).send();
        async move {
            let resp = request.await.unwrap();
            let status = resp.status();
            (status, resp.text().await.unwrap())
        }
    };
    let render = |rpc_id: u64, handshake: &str| {
        json!({ "jsonrpc": "2.0", "id": rpc_id, "method": "tools/call", "params": { "name": "svc_render",
                "arguments": { "handshakeId": handshake, "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } } } })
    };
    let cancelled = tokio::spawn(post(render(41, &handshakes[0])));
    fake.wait_for_requests(1).await;

    // Another id, or a request that is not running, cancels nothing.
    let cancel = |id: Value| json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id, "reason": "the user closed the card" } });
    assert_eq!(post(cancel(json!(40))).await.0, StatusCode::ACCEPTED);
    assert_eq!(post(cancel(json!("41"))).await.0, StatusCode::ACCEPTED);
    // Another client of the same identity (every bearer is `builder` here) has its own ids.
    let other_client = app
        .client
        .post(app.mcp_url())
        .bearer_auth("another-client")
        .json(&cancel(json!(41)))
        .send()
        .await
        .unwrap();
    assert_eq!(other_client.status(), StatusCode::ACCEPTED);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        !cancelled.is_finished(),
        "only this client's notifications/cancelled for id 41 cancels it"
    );

    assert_eq!(post(cancel(json!(41))).await.0, StatusCode::ACCEPTED);
    let (status, body) = tokio::time::timeout(std::time::Duration::from_secs(5), cancelled)
        .await
        .expect("the cancelled render answers at once")
        .unwrap();
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], 41);
    assert_eq!(body["error"]["code"], -32800, "{body}");

    // The only slot is free: with no waiting room, a held slot would answer 503 here.
    let next = tokio::spawn(post(render(42, &handshakes[1])));
    fake.wait_for_requests(2).await;
    fake.resume();
    let (status, body) = next.await.unwrap();
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["structuredContent"]["outcome"], "rendered", "{body}");
    // Nothing of the cancelled render was consumed: its handshake renders now.
    let again = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": handshakes[0], "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } }),
        )
        .await;
    assert_eq!(again["outcome"], "rendered");
}

/// The official TypeScript SDK client (a real peer) aborts a `callTool` of `svc_render`: its
/// `notifications/cancelled` frees the only slot and gives the handshake back
/// (`tests/peers/ts-sdk-cancel.mjs` asserts the renders; this test holds and releases the provider).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_typescript_sdk_abort_cancels_the_render() {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
    use svc_tests::external::deps_present;

    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
    if !deps_present(
        "a_typescript_sdk_abort_cancels_the_render",
        &[peers.join("node_modules/@modelcontextprotocol/sdk/package.json")],
        "SVC_REQUIRE_PEERS",
        "peers",
        "run tests/peers/install.sh",
    ) {
        return;
    }
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(
        "export default function Card() { return <p style={{ color: 'var(--svc-color-fg)' }}>ok</p>; }",
    ));
    fake.pause();
    let base = format!("{}/v1", fake.base_url);
    let app = TestApp::spawn_configured("queue_sdk_cancel", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
        let openai = s.generation.providers.get_mut("openai").unwrap();
        openai.base_url = base;
        openai.api_key = "sk-test".into();
    })
    .await
    .unwrap();
    let node = std::env::var("SVC_PEER_NODE").unwrap_or_else(|_| "node".to_owned());
    let mut peer = tokio::process::Command::new(node)
        .arg(peers.join("ts-sdk-cancel.mjs"))
        .arg(app.mcp_url())
        .arg("openai:gpt-4.1-mini")
        .current_dir(&peers)
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn node");
    // The abandoned render and the next one both reach the provider before it answers anything
    // (node's start and the SDK's handshakes take seconds on a loaded machine: a long deadline).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let reached = loop {
        if fake.request_count() >= 2 {
            break true;
        }
        if std::time::Instant::now() > deadline || peer.try_wait().unwrap().is_some() {
            break false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    fake.resume();
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), peer.wait_with_output())
        .await
        .expect("ts-sdk-cancel finishes within 60 s")
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success() && stdout.contains("ts-sdk-cancel: OK"),
        "ts-sdk-cancel {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        output.status
    );
    assert!(reached, "the next render never reached the provider");
}
