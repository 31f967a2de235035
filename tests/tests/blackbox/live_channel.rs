//! The live channel `/ws` over a real WebSocket: auth, every frame type, dedup, replay, wake-ups.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    subscribe_must_come_first_and_acks_with_cursors,
    bad_tokens_are_refused_alike,
    a_session_token_reconnects,
    actions_are_validated_against_the_contract,
    host_context_is_echoed_by_consume,
    runtime_tools_refresh_tokens_and_sync_context,
    garbage_and_oversized_frames_are_answered_not_fatal,
    a_new_render_in_the_same_host_conversation_reaches_mounted_cards,
    the_polling_fallback_carries_the_same_frames,
    a_bearer_on_the_upgrade_subscribes_its_own_apps,
    a_client_seq_that_is_not_a_safe_integer_is_a_bad_frame,
    a_cursor_below_zero_replays_everything_without_a_gap,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    actions_are_stored_deduplicated_and_drained_once,
    a_waiting_consume_wakes_on_an_action,
    replay_sends_events_then_envelopes_after_the_cursors,
    updates_amends_and_emits_reach_the_card,
    a_replay_carries_at_most_eight_mebibytes_of_payloads,
);

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": {
            "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } }, "required": ["note"] } },
            "ping": {}
        },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } },
        "contextSpec": { "tab": { "schema": { "enum": ["summary", "lines"] }, "default": "summary" } }
    })
}

/// Renders a card; returns (sessionId, the `_meta['ai.svc/render']` slice).
async fn card(app: &TestApp) -> (String, Value) {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "live card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    (slice["sessionId"].as_str().unwrap().to_owned(), slice)
}

async fn subscribed(app: &TestApp, slice: &Value, extra: Value) -> (LiveClient, Value) {
    let mut ws = LiveClient::connect(&app.base).await;
    let mut payload = json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] });
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    ws.send("subscribe", payload).await;
    let ack = ws.expect("ack").await;
    (ws, ack)
}

fn action(session: &str, intent: &str, data: Value, client_seq: i64) -> Value {
    json!({ "sessionId": session, "type": "data:submit", "payload": { "action": intent, "data": data }, "clientSeq": client_seq, "uiContext": { "tab": "lines" } })
}

async fn subscribe_must_come_first_and_acks_with_cursors(app: TestApp) {
    let (session, slice) = card(&app).await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send("ping", Value::Null).await;
    assert_eq!(ws.recv().await["type"], "pong", "ping works before subscribe");
    ws.send("action", action(&session, "approve", json!({ "note": "x" }), 1))
        .await;
    assert_eq!(ws.expect("error").await["code"], "NOT_SUBSCRIBED");
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": slice["wsToken"], "supportedVersions": ["draft-2026-06-12"] }),
    )
    .await;
    let ack = ws.expect("ack").await;
    assert_eq!(ack["sessionId"], session.as_str());
    assert_eq!(ack["appId"], slice["appId"]);
    assert_eq!(ack["epoch"], 1);
    assert_eq!(ack["props"], json!({ "title": "t" }));
    assert_eq!(ack["lastSequence"], 0);
    assert!(
        ack["lastStreamSeq"].as_i64().unwrap() >= 1,
        "generation progress was streamed on _svc:lifecycle"
    );
    assert!(ack["component"]["code"].as_str().unwrap().contains("export default"));
    assert!(ack["sessionToken"].is_string());
    ws.send("ping", Value::Null).await;
    assert_eq!(ws.recv().await["type"], "pong");
    let mut other = LiveClient::connect(&app.base).await;
    other
        .send(
            "subscribe",
            json!({ "sessionId": session, "wsToken": slice["wsToken"], "supportedVersions": ["1.0.0"] }),
        )
        .await;
    assert_eq!(other.expect("error").await["code"], "UNSUPPORTED_VERSION");
}

async fn bad_tokens_are_refused_alike(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (other_session, other_slice) = card(&app).await;
    let token = slice["wsToken"].as_str().unwrap();
    let tampered = format!("{}x", &token[..token.len() - 1]);
    let cases = [
        json!({ "sessionId": session, "wsToken": tampered }),
        json!({ "sessionId": session, "wsToken": other_slice["wsToken"] }),
        json!({ "sessionId": other_session, "wsToken": token }),
        json!({ "sessionId": session }),
        json!({ "sessionId": "00000000-0000-0000-0000-000000000000", "wsToken": token }),
        json!({ "sessionId": session, "wsToken": token, "appId": "another-app" }),
    ];
    let mut answers = vec![];
    for payload in cases {
        let mut ws = LiveClient::connect(&app.base).await;
        ws.send("subscribe", payload.clone()).await;
        let error = ws.expect("error").await;
        assert_eq!(error["code"], "AUTH_FAILED", "{payload}");
        assert!(error.get("props").is_none());
        answers.push(error);
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "every refusal is the same answer"
    );
}

async fn a_session_token_reconnects(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (_, ack) = subscribed(&app, &slice, json!({})).await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "sessionToken": ack["sessionToken"] }),
    )
    .await;
    let again = ws.expect("ack").await;
    assert!(
        again.get("sessionToken").is_none(),
        "a session token is issued once, on the wsToken subscribe"
    );
    let mut misuse = LiveClient::connect(&app.base).await;
    misuse
        .send(
            "subscribe",
            json!({ "sessionId": session, "wsToken": ack["sessionToken"] }),
        )
        .await;
    assert_eq!(
        misuse.expect("error").await["code"],
        "AUTH_FAILED",
        "a session token is not a wsToken"
    );
}

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

async fn updates_amends_and_emits_reach_the_card(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, ack) = subscribed(&app, &slice, json!({})).await;
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert_eq!(
        p,
        json!({ "sessionId": session, "props": { "title": "v2" }, "epoch": 2 })
    );
    app.tool_ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "merge", "patch": { "title": "v2b" } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert_eq!(
        (p["props"]["title"].as_str(), p["epoch"].as_i64()),
        (Some("v2b"), Some(2))
    );
    let base = ack["lastStreamSeq"].as_i64().unwrap();
    for (i, line) in ["a", "b"].iter().enumerate() {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": line }),
        )
        .await;
        let d = ws.expect("data").await;
        assert_eq!(d["channel"], "log");
        assert_eq!(d["payload"], *line);
        assert_eq!(d["mode"], "append");
        assert_eq!(d["seq"].as_i64().unwrap(), base + 1 + i as i64);
        assert!(d["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2b" } }),
    )
    .await;
    ws.expect_silence(Duration::from_millis(300)).await;
}

async fn replay_sends_events_then_envelopes_after_the_cursors(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut first, ack) = subscribed(&app, &slice, json!({})).await;
    let base = ack["lastStreamSeq"].as_i64().unwrap();
    for n in 1..=3 {
        first
            .send(
                "action",
                action(&session, "approve", json!({ "note": format!("n{n}") }), n),
            )
            .await;
        first.expect("system").await;
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("line {n}") }),
        )
        .await;
        first.expect("data").await;
    }
    drop(first);
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": base + 1, "sinceSequence": 1 })).await;
    assert_eq!(ack["replay"]["gap"], false);
    assert_eq!(ack["lastSequence"], 3);
    let mut kinds = vec![];
    for _ in 0..4 {
        let f = ws.recv().await;
        kinds.push(f["type"].as_str().unwrap().to_owned());
        match f["type"].as_str().unwrap() {
            "render_event" => assert!(f["payload"]["sequence"].as_i64().unwrap() > 1),
            "data" => assert!(f["payload"]["seq"].as_i64().unwrap() > base + 1),
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(
        kinds,
        ["render_event", "render_event", "data", "data"],
        "session events first, then stream envelopes"
    );
    ws.expect_silence(Duration::from_millis(200)).await;
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

async fn runtime_tools_refresh_tokens_and_sync_context(app: TestApp) {
    let (session, _) = card(&app).await;
    let fresh = app
        .tool_ok("svc_runtime_refresh_ws_token", json!({ "sessionId": session }))
        .await;
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": fresh["wsToken"] }),
    )
    .await;
    ws.expect("ack").await;
    let synced = app
        .tool_ok(
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": { "tab": "lines", "undeclared": 1 } }),
        )
        .await;
    assert_eq!(synced["contextSnapshot"], json!({ "tab": "lines" }));
    let bad = app
        .tool_error_result(
            "svc_runtime_sync_context",
            json!({ "sessionId": session, "context": { "tab": "other" } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
    let missing = app
        .tool_rpc_error("svc_runtime_refresh_ws_token", json!({ "sessionId": "nope" }))
        .await;
    assert_eq!(missing["code"], -32002);
}

async fn garbage_and_oversized_frames_are_answered_not_fatal(app: TestApp) {
    let (_, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send_raw("not json".into()).await;
    assert_eq!(ws.expect("error").await["code"], "BAD_FRAME");
    ws.send("teleport", json!({})).await;
    assert_eq!(ws.expect("error").await["code"], "BAD_FRAME");
    ws.send("ping", Value::Null).await;
    ws.expect("pong").await;
    ws.send_raw(format!(
        "{{\"type\":\"ping\",\"payload\":\"{}\"}}",
        "x".repeat(300 * 1024)
    ))
    .await;
    assert_eq!(ws.expect("error").await["code"], "FRAME_TOO_LARGE");
    assert_eq!(ws.recv().await["payload"], 1009, "then closed with 1009");
    // Past the transport's cap (1 MiB) the message is refused from its header, the same way.
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    ws.send_raw(format!(
        "{{\"type\":\"ping\",\"payload\":\"{}\"}}",
        "x".repeat(1536 * 1024)
    ))
    .await;
    assert_eq!(ws.expect("error").await["code"], "FRAME_TOO_LARGE");
    assert_eq!(ws.recv().await["payload"], 1009, "then closed with 1009");
    // The server is fine.
    let (_, again) = subscribed(&app, &slice, json!({})).await;
    assert_eq!(again["epoch"], 1);
}

/// A socket that never subscribes is closed once `live.subscribe_timeout_seconds` has passed,
/// though it answers every ping: it would otherwise hold its place under the connection cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_never_subscribes_is_closed_after_the_subscribe_timeout() {
    let app = TestApp::spawn_configured(
        "subscribe_timeout",
        svc_tests::Backend::Sqlite,
        Auth::DevAllowAll,
        |s| s.live.subscribe_timeout_seconds = 1,
    )
    .await
    .unwrap();
    let mut idle = LiveClient::connect(&app.base).await;
    let opened = std::time::Instant::now();
    idle.send("ping", Value::Null).await;
    assert_eq!(idle.recv().await["type"], "pong");
    let error = idle.recv().await;
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["payload"]["code"], "NOT_SUBSCRIBED", "{error}");
    assert_eq!(error["payload"]["message"], "no subscribe within 1 s of opening");
    assert_eq!(idle.recv().await, json!({ "type": "_closed", "payload": 1008 }));
    assert!(opened.elapsed() >= Duration::from_millis(900), "{:?}", opened.elapsed());

    // A socket that subscribed in time stays open past the deadline.
    let (_, slice) = card(&app).await;
    let (mut bound, _) = subscribed(&app, &slice, json!({})).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    bound.send("ping", Value::Null).await;
    assert_eq!(bound.recv().await["type"], "pong");
}

async fn a_cursor_below_zero_replays_everything_without_a_gap(app: TestApp) {
    let (session, slice) = card(&app).await;
    for n in 0..2 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("l{n}") }),
        )
        .await;
    }
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": -5 })).await;
    assert_eq!(ack["replay"]["gap"], false, "{}", ack["replay"]);
    // Every envelope from the first (the render's lifecycle stages come first), no gap frame.
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    let mut payloads = Vec::new();
    for seq in 1..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq);
        payloads.push(frame["payload"].clone());
    }
    assert_eq!(payloads[payloads.len() - 2..], [json!("l0"), json!("l1")]);
}

/// Payloads are as large as a request body allows; a replay of the whole buffer of them was held
/// at once. It carries the newest that fit in 8 MiB of payload JSON, and says the rest is a gap.
async fn a_replay_carries_at_most_eight_mebibytes_of_payloads(app: TestApp) {
    const CAP: usize = 8 * 1024 * 1024;
    let text = "p".repeat(1_000_000);
    let encoded = text.len() + 2; // the quotes of a JSON string
    let (session, slice) = card(&app).await;
    for _ in 0..10 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": text }),
        )
        .await;
    }
    let fitting = (CAP / encoded) as i64;
    assert!(fitting < 10, "the test emits more than fits");
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0 })).await;
    assert_eq!(ack["replay"]["gap"], true, "{}", ack["replay"]);
    assert_eq!(ws.expect("system").await["event"], "replay_gap");
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    for seq in last - fitting + 1..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq, "the newest, oldest first");
        assert_eq!(frame["payload"].as_str().map(str::len), Some(text.len()));
    }
    ws.expect_silence(Duration::from_millis(300)).await;

    // From a cursor inside what fits, nothing is left out.
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": last - 2 })).await;
    assert_eq!(ack["replay"]["gap"], false, "{}", ack["replay"]);
    for seq in last - 1..=last {
        assert_eq!(ws.expect("data").await["seq"].as_i64().unwrap(), seq);
    }
}

/// A card that stops reading fills its socket's buffers; the server gives up on a frame it could
/// not write within 30 s and drops the socket, instead of holding it (and what it was sent) for
/// good. Slow by nature: about 35 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_whose_peer_stops_reading_is_dropped() {
    let app = TestApp::spawn("stalled_reader", svc_tests::Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let (session, slice) = card(&app).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    // Far more than loopback's socket buffers hold, while the card reads nothing.
    let emitted = 32;
    let text = "p".repeat(1_000_000);
    for _ in 0..emitted {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": text }),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(33)).await;
    let mut received = 0;
    let ended = loop {
        match ws.next_or_why(Duration::from_secs(10)).await {
            Ok(frame) if frame["type"] == "data" => received += 1,
            Ok(frame) if frame["type"] == "_closed" => break "closed".to_owned(),
            Ok(_) => {}
            Err(why) => break why,
        }
    };
    assert!(
        !ended.starts_with("nothing within"),
        "the socket was held open: {ended}"
    );
    assert!(
        received < emitted,
        "{received} of {emitted} frames came: the writer never gave up"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_older_than_the_replay_buffer_is_reported_as_a_gap() {
    let app = TestApp::spawn_configured("replay_gap", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.live.replay_buffer = 2
    })
    .await
    .unwrap();
    let (session, slice) = card(&app).await;
    for n in 0..5 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("l{n}") }),
        )
        .await;
    }
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0 })).await;
    assert_eq!(ack["replay"]["gap"], true);
    assert_eq!(ack["replay"]["lost"], json!(["streams"]), "{}", ack["replay"]);
    let system = ws.expect("system").await;
    assert_eq!(system["event"], "replay_gap");
    assert_eq!(
        system["lost"],
        json!(["streams"]),
        "the card rebuilds its streams: {system}"
    );
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    assert_eq!(
        ws.expect("data").await["seq"].as_i64().unwrap(),
        last - 1,
        "the newest buffered envelopes follow"
    );
    assert_eq!(ws.expect("data").await["seq"].as_i64().unwrap(), last);
    ws.expect_silence(Duration::from_millis(200)).await;
}

async fn render_in_conversation(app: &TestApp, conversation: &str) -> Value {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "live card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let meta = json!({ "ai.svc/host-session": { "hostName": "test-host", "hostSessionId": conversation } });
    let body = app
        .rpc("tools/call", json!({ "name": "svc_render", "arguments": { "handshakeId": hs["handshakeId"], "props": { "title": "t" } }, "_meta": meta }))
        .await
        .1;
    body["result"]["_meta"]["ai.svc/render"].clone()
}

async fn a_new_render_in_the_same_host_conversation_reaches_mounted_cards(app: TestApp) {
    let first = render_in_conversation(&app, "conv-a").await;
    let (mut ws, _) = subscribed(&app, &first, json!({})).await;
    let second = render_in_conversation(&app, "conv-a").await;
    let frame = ws.expect("render").await;
    assert_eq!(frame["session"]["sessionId"], second["sessionId"]);
    assert_eq!(
        frame["session"]["resourceUri"],
        format!("ui://svc/render/{}", second["sessionId"].as_str().unwrap())
    );
    assert_eq!(frame["matchType"], "host-session");
    render_in_conversation(&app, "conv-b").await;
    app.render("no conversation", json!({}), json!({})).await;
    ws.expect_silence(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_cursor_older_than_the_buffer_replays_the_newest_actions() {
    let app = TestApp::spawn_configured("action_gap", svc_tests::Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.live.replay_buffer = 2
    })
    .await
    .unwrap();
    let (session, slice) = card(&app).await;
    let (mut first, first_ack) = subscribed(&app, &slice, json!({})).await;
    let streams_seen = first_ack["lastStreamSeq"].as_i64().unwrap();
    for n in 1..=4 {
        first
            .send(
                "action",
                action(&session, "approve", json!({ "note": format!("n{n}") }), n),
            )
            .await;
        first.expect("system").await;
    }
    // Every stream envelope is within reach of its cursor: only actions were lost, and a card
    // keeps its streams (docs/live-channel.md, `lost`).
    let cursors = json!({ "sinceSequence": 0, "fromSeq": streams_seen });
    let (mut ws, ack) = subscribed(&app, &slice, cursors).await;
    assert_eq!(ack["replay"]["gap"], true);
    assert_eq!(ack["replay"]["lost"], json!(["actions"]), "{}", ack["replay"]);
    let system = ws.expect("system").await;
    assert_eq!(system["event"], "replay_gap");
    assert_eq!(system["lost"], json!(["actions"]), "{system}");
    let replayed: Vec<i64> = [ws.expect("render_event").await, ws.expect("render_event").await]
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(replayed, [3, 4], "the newest actions, never losing the latest");

    // The polling fallback says the same.
    let polled = poll(&app, &slice, &format!("wait=0&sinceSequence=0&fromSeq={streams_seen}")).await;
    let frames = polled["frames"].as_array().unwrap();
    assert_eq!(frames[0]["payload"]["replay"]["lost"], json!(["actions"]), "{polled}");
    let gap = frames
        .iter()
        .find(|f| f["type"] == "system")
        .expect("a replay_gap frame");
    assert_eq!(gap["payload"]["event"], "replay_gap");
    assert_eq!(gap["payload"]["lost"], json!(["actions"]), "{gap}");
}

fn polling_url(slice: &Value, query: &str) -> String {
    format!(
        "{}?token={}&{query}",
        slice["pollingUrl"].as_str().unwrap(),
        slice["wsToken"].as_str().unwrap()
    )
}

async fn poll(app: &TestApp, slice: &Value, query: &str) -> Value {
    let resp = app.client.get(polling_url(slice, query)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

async fn the_polling_fallback_carries_the_same_frames(app: TestApp) {
    let (session, slice) = card(&app).await;
    assert_eq!(slice["pollingUrl"], format!("{}/_svc/poll/{session}", app.base));
    // A sandboxed card (origin `null`) may call it: CORS, preflight included.
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, slice["pollingUrl"].as_str().unwrap())
        .header("origin", "null")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    assert!(preflight.headers().contains_key("access-control-allow-origin"));
    let simple = app
        .client
        .get(polling_url(&slice, "wait=0"))
        .header("origin", "null")
        .send()
        .await
        .unwrap();
    assert!(simple.headers().contains_key("access-control-allow-origin"));
    let exposed = simple
        .headers()
        .get("access-control-expose-headers")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        exposed.split(',').any(|h| h.trim() == "retry-after"),
        "the card's script may read how long to wait: {exposed:?}"
    );
    // The first poll brings the ack, with a session token for the polls after the wsToken's
    // lifetime; the cursors make the next one wait for news.
    let first = poll(&app, &slice, "wait=0").await;
    assert_eq!(first["frames"][0]["type"], "ack");
    let ack = &first["frames"][0]["payload"];
    assert_eq!(ack["props"], json!({ "title": "t" }));
    assert!(ack["component"]["code"].as_str().unwrap().contains("export default"));
    let session_token = ack["sessionToken"].as_str().expect("a session token").to_owned();
    let mut slice = slice;
    slice["wsToken"] = json!(session_token);
    let cursors = first["cursors"].clone();
    let query = format!(
        "revision={}&fromSeq={}&sinceSequence={}&wait=0",
        cursors["revision"], cursors["lastStreamSeq"], cursors["lastSequence"]
    );
    assert_eq!(poll(&app, &slice, &query).await["frames"], json!([]));
    // A long poll wakes for an emit.
    let waiting = {
        let url = polling_url(&slice, &query.replace("wait=0", "wait=10"));
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let body: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
            (started.elapsed(), body)
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "polled" }),
    )
    .await;
    let (elapsed, woke) = waiting.await.unwrap();
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(woke["frames"][0]["type"], "data");
    assert_eq!(woke["frames"][0]["payload"]["payload"], "polled");
    // Actions go up by POST and are acknowledged like on the socket.
    let post = polling_url(&slice, "");
    let frame = json!({ "type": "action", "payload": action(&session, "approve", json!({ "note": "by poll" }), 1) });
    let ack: Value = app
        .client
        .post(&post)
        .json(&frame)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ack["frames"][0]["payload"]["event"], "action_stored");
    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": session })).await;
    assert_eq!(consumed["events"][0]["actionData"], json!({ "note": "by poll" }));
    // A bad token is refused.
    let bad = app
        .client
        .get(format!("{}?token=nope", slice["pollingUrl"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
}

/// POSTs one JSON-RPC request to `path` with the app's bearer; returns the whole reply.
async fn post_rpc(app: &TestApp, path: &str, method: &str, params: Value) -> Value {
    app.client
        .post(format!("{}{path}", app.base))
        .bearer_auth(&app.bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A bearer on the upgrade request authenticates the socket like `/mcp`: its default app's
/// sessions without a token; `appId` picks another app of the same identity (checked like
/// `/apps/<appId>/mcp`); an app the bearer does not hold, or a mismatched `appId`, is refused.
async fn a_bearer_on_the_upgrade_subscribes_its_own_apps(app: TestApp) {
    let (default_session, _) = card(&app).await;
    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send("subscribe", json!({ "sessionId": default_session })).await;
    assert_eq!(ws.expect("ack").await["sessionId"], default_session.as_str());

    // A second app of the same identity, and a card rendered on its endpoint.
    let made = post_rpc(
        &app,
        "/ops",
        "tools/call",
        json!({ "name": "svc_ops_create_app", "arguments": { "displayName": "second" } }),
    )
    .await;
    let second = made["result"]["structuredContent"]["appId"]
        .as_str()
        .unwrap_or_else(|| panic!("svc_ops_create_app: {made}"))
        .to_owned();
    let endpoint = format!("/apps/{second}/mcp");
    let hs = post_rpc(&app, &endpoint, "tools/call", json!({ "name": "svc_handshake", "arguments": { "intent": "second app card", "blueprintDraft": { "contract": contract() } } })).await;
    let handshake = &hs["result"]["structuredContent"]["handshakeId"];
    let rendered = post_rpc(
        &app,
        &endpoint,
        "tools/call",
        json!({ "name": "svc_render", "arguments": { "handshakeId": handshake, "props": { "title": "t" } } }),
    )
    .await;
    let second_session = rendered["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("svc_render on {endpoint}: {rendered}"))
        .to_owned();

    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send("subscribe", json!({ "sessionId": second_session })).await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "without appId the bearer means its default app"
    );
    ws.send("subscribe", json!({ "sessionId": second_session, "appId": second }))
        .await;
    let ack = ws.expect("ack").await;
    assert_eq!(ack["sessionId"], second_session.as_str());
    assert_eq!(ack["appId"], second.as_str());

    let mut ws = LiveClient::connect_with_bearer(&app.base, &app.bearer).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": second_session, "appId": "NoSuchApp0000000" }),
    )
    .await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "an app the bearer does not hold"
    );
    ws.send("subscribe", json!({ "sessionId": default_session, "appId": second }))
        .await;
    assert_eq!(
        ws.expect("error").await["code"],
        "AUTH_FAILED",
        "a session outside the named app"
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
