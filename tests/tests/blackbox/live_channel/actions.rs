//! What a card sends up: actions validated against the contract, stored once per `clientSeq` and
//! drained once by `svc_consume` (waking a waiting one), and the host context it observed.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{action, card, subscribed};

on_every_backend!(Auth::DevAllowAll =>
    actions_are_validated_against_the_contract,
    host_context_is_echoed_by_consume,
    a_client_seq_that_is_not_a_safe_integer_is_a_bad_frame,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    actions_are_stored_deduplicated_and_drained_once,
    a_waiting_consume_wakes_on_an_action,
);

async fn actions_are_stored_deduplicated_and_drained_once(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send("action", action(&session, "approve", json!({ "note": "ok" }), 7))
        .await;
    let stored = ws.expect("system").await;
    assert_eq!(stored["event"], "action_stored");
    assert_eq!(stored["duplicate"], false);
    let action_id = stored["actionId"].as_str().unwrap().to_owned();
    assert!(action_id.len() == 8 && action_id.chars().all(|c| c.is_ascii_hexdigit()));
    ws.send("action", action(&session, "approve", json!({ "note": "ok" }), 7))
        .await;
    let again = ws.expect("system").await;
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["actionId"], action_id.as_str());

    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    let events = consumed["events"].as_array().unwrap();
    assert_eq!(
        events.len(),
        1,
        "at-least-once from the card, exactly once to the agent"
    );
    let e = &events[0];
    assert_eq!(e["type"], "action");
    assert_eq!(e["sessionId"], session.as_str());
    assert_eq!(e["intent"], "approve");
    assert_eq!(e["actionData"], json!({ "note": "ok" }));
    assert_eq!(e["uiContext"], json!({ "tab": "lines" }));
    assert_eq!(e["actionId"], action_id.as_str());
    assert!(e["firedAt"].as_str().unwrap().ends_with('Z'));
    let drain = ws.expect("drain_ack").await;
    assert_eq!(drain["actionIds"], json!([action_id]));
    let empty = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(empty["events"], json!([]));
    let s = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(s["eventSequence"], 1);
}

async fn a_waiting_consume_wakes_on_an_action(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    let waiting = {
        let (url, bearer, session) = (app.mcp_url(), app.bearer.clone(), session.clone());
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_consume", "arguments": { "sessionId": session, "timeout": 20 } } });
            let reply: Value = reqwest::Client::new()
                .post(url)
                .bearer_auth(bearer)
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            (started.elapsed(), reply)
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    ws.send("action", action(&session, "ping", Value::Null, 1)).await;
    ws.expect("system").await;
    let (elapsed, reply) = waiting.await.unwrap();
    assert!(
        elapsed < Duration::from_secs(5),
        "woke at once, not at the 20 s timeout: {elapsed:?}"
    );
    assert_eq!(reply["result"]["structuredContent"]["events"][0]["intent"], "ping");
    assert_eq!(
        reply["result"]["structuredContent"]["events"][0]["actionData"],
        Value::Null
    );
}

async fn actions_are_validated_against_the_contract(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send("action", action(&session, "approve", json!({ "note": 5 }), 1))
        .await;
    let e = ws.expect("error").await;
    assert_eq!(e["code"], "CONTRACT_VIOLATION");
    assert_eq!(e["violations"][0]["path"], "/note");
    ws.send("action", action(&session, "delete-everything", json!({}), 2))
        .await;
    assert_eq!(ws.expect("error").await["code"], "CONTRACT_VIOLATION");
    let mut bad_context = action(&session, "approve", json!({ "note": "x" }), 3);
    bad_context["uiContext"] = json!({ "tab": "nope" });
    ws.send("action", bad_context).await;
    assert_eq!(ws.expect("error").await["code"], "CONTRACT_VIOLATION");
    let mut wrong_type = action(&session, "approve", json!({ "note": "x" }), 4);
    wrong_type["type"] = json!("data:change");
    ws.send("action", wrong_type).await;
    assert_eq!(ws.expect("error").await["code"], "BAD_FRAME");
    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(consumed["events"], json!([]), "nothing invalid was stored");
}

async fn host_context_is_echoed_by_consume(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send(
        "host_context_observed",
        json!({ "displayMode": "inline", "containerDimensions": { "width": 640 } }),
    )
    .await;
    ws.send("ping", Value::Null).await;
    ws.expect("pong").await;
    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(consumed["client"]["containerDimensions"]["width"], 640);
    let s = app.tool_ok("svc_get_session", json!({ "sessionId": session })).await;
    assert_eq!(
        s["contextSnapshot"],
        json!({ "tab": "summary" }),
        "the host observation is not a context slot"
    );
}

/// `clientSeq` deduplicates actions, so one the server cannot keep exactly (too large, a fraction,
/// negative, not a number) is refused rather than stored without deduplication.
async fn a_client_seq_that_is_not_a_safe_integer_is_a_bad_frame(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    for bad in [
        json!(1e20),
        json!("x"),
        json!(1.5),
        json!(-1),
        json!(9_007_199_254_740_992_u64),
        json!(null),
    ] {
        let mut envelope = action(&session, "approve", json!({ "note": "x" }), 0);
        envelope["clientSeq"] = bad.clone();
        ws.send("action", envelope).await;
        let e = ws.expect("error").await;
        assert_eq!(e["code"], "BAD_FRAME", "{bad}: {e}");
        assert_eq!(
            e["message"], "clientSeq must be an integer from 0 to 9007199254740991",
            "{bad}"
        );
    }
    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(consumed["events"], json!([]), "nothing was stored");

    let mut largest = action(&session, "approve", json!({ "note": "x" }), 0);
    largest["clientSeq"] = json!(9_007_199_254_740_991_u64);
    ws.send("action", largest.clone()).await;
    assert_eq!(ws.expect("system").await["duplicate"], false);
    ws.send("action", largest).await;
    assert_eq!(ws.expect("system").await["duplicate"], true, "deduplicated");
    let mut without = action(&session, "approve", json!({ "note": "y" }), 0);
    without.as_object_mut().unwrap().remove("clientSeq");
    ws.send("action", without).await;
    assert_eq!(
        ws.expect("system").await["event"],
        "action_stored",
        "clientSeq is optional"
    );
}
