//! `[limits] long_polls_per_caller`: past the bound, a caller's next long-poll (`svc_consume`
//! with a timeout, the live channel's HTTP poll) is answered at once, as with no wait, while the
//! polls it holds keep waiting.

use std::time::{Duration, Instant};

use serde_json::json;
use svc_tests::{Auth, Backend, TestApp};

/// Well under the polls' own 25 s: "answered at once" on a slow machine.
const AT_ONCE: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_poll_past_the_callers_bound_is_answered_at_once() {
    let app = TestApp::spawn_configured("held_polls", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.limits.long_polls_per_caller = 2;
    })
    .await
    .expect("SQLite is always available");
    let contract = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "go": {} } });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "held polls", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let rendered = app
        .call("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    let slice = &rendered["result"]["_meta"]["ai.svc/render"];
    let session = slice["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("a render: {rendered}"))
        .to_owned();
    let consume = json!({ "sessionId": session, "timeout": 25 });

    // Two polls held: the caller's bound.
    let held: Vec<_> = (0..2)
        .map(|_| {
            let (base, consume) = (app.base.clone(), consume.clone());
            tokio::spawn(async move {
                reqwest::Client::new()
                    .post(format!("{base}/mcp"))
                    .bearer_auth("dev")
                    .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": { "name": "svc_consume", "arguments": consume } }))
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap()
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(held.iter().all(|poll| !poll.is_finished()), "both polls wait");

    // A third waits for nothing: the answer of a timeout of 0.
    let started = Instant::now();
    let third = app.tool_ok("svc_consume", consume.clone()).await;
    assert!(started.elapsed() < AT_ONCE, "answered after {:?}", started.elapsed());
    assert_eq!(third["events"], json!([]), "{third}");
    assert_eq!(third["status"], "active", "{third}");

    // So does the live channel's HTTP poll of the same caller.
    let token = slice["wsToken"]
        .as_str()
        .unwrap_or_else(|| panic!("a wsToken: {rendered}"));
    let started = Instant::now();
    let polled = reqwest::Client::new()
        .get(format!(
            "{}/_svc/poll/{session}?token={token}&fromSeq=0&wait=25",
            app.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(polled.status(), reqwest::StatusCode::OK);
    assert!(started.elapsed() < AT_ONCE, "answered after {:?}", started.elapsed());
    assert!(held.iter().all(|poll| !poll.is_finished()), "the held polls still wait");
}
