//! `[limits] long_polls_per_caller`: past the bound, the next long-poll (`svc_consume` with a
//! timeout, per caller; the live channel's HTTP poll, per key of its token, here per session:
//! `--dev-allow-all` tokens carry no key) is answered at once, as with no wait, while the polls
//! held keep waiting.

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

    assert!(held.iter().all(|poll| !poll.is_finished()), "the held polls still wait");

    // The live channel's HTTP polls are bounded per key of their token (per session here: a
    // dev server's tokens carry no key): the first poll reads the cursors, then two polls from them wait, and a third is
    // answered at once with nothing new.
    let token = slice["wsToken"]
        .as_str()
        .unwrap_or_else(|| panic!("a wsToken: {rendered}"))
        .to_owned();
    let poll = |cursors: &serde_json::Value, wait: u64| {
        let url = match cursors.is_null() {
            true => format!("{}/_svc/poll/{session}?token={token}&wait={wait}", app.base),
            false => format!(
                "{}/_svc/poll/{session}?token={token}&revision={}&fromSeq={}&sinceSequence={}&wait={wait}",
                app.base, cursors["revision"], cursors["lastStreamSeq"], cursors["lastSequence"]
            ),
        };
        async move {
            let answer = reqwest::get(url).await.unwrap();
            assert_eq!(answer.status(), reqwest::StatusCode::OK);
            answer.json::<serde_json::Value>().await.unwrap()
        }
    };
    let cursors = poll(&serde_json::Value::Null, 0).await["cursors"].clone();
    let held_http: Vec<_> = (0..2).map(|_| tokio::spawn(poll(&cursors, 25))).collect();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(held_http.iter().all(|poll| !poll.is_finished()), "both HTTP polls wait");
    let started = Instant::now();
    let third = poll(&cursors, 25).await;
    assert!(started.elapsed() < AT_ONCE, "answered after {:?}", started.elapsed());
    assert_eq!(third["frames"], json!([]), "{third}");
    assert!(
        held_http.iter().all(|poll| !poll.is_finished()),
        "the held HTTP polls still wait"
    );
}
