//! Two replicas on one PostgreSQL database (or MariaDB, through NATS): live frames and consume
//! wake-ups cross replicas through the event bus (PostgreSQL LISTEN/NOTIFY, and NATS), and
//! stopping one replica loses nothing it acknowledged.
//!
//! The NATS variant needs a broker at `SVC_TEST_NATS_URL` (default `nats://127.0.0.1:4222`):
//! without one it prints a `skipped:` line, unless `SVC_REQUIRE_NATS=1` (CI), where it fails.

use std::time::Duration;

use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp};

/// `tools/call` as the dev server's bearer; the `result`, which must not be an error.
async fn call(base: &str, tool: &str, arguments: Value) -> Value {
    call_as(base, "dev", tool, arguments).await
}

/// One JSON-RPC request to `base`'s `/mcp` as `bearer`; the whole reply.
async fn rpc(base: &str, bearer: &str, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn call_as(base: &str, bearer: &str, tool: &str, arguments: Value) -> Value {
    let reply = rpc(
        base,
        bearer,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    assert!(
        reply["result"]["structuredContent"].is_object() && reply["result"].get("isError").is_none(),
        "{tool} at {base}: {reply}"
    );
    reply["result"].clone()
}

/// Settings for the NATS variant of a test: the broker, and a subject of the test's own (other
/// runs on the same broker are not its replicas). `None`: no broker, the test is skipped.
async fn on_nats(test: &str) -> Option<impl FnOnce(&mut svc::Settings)> {
    let url = svc_tests::nats::broker_url(test).await?;
    let subject = format!("svc.test.{}", uuid::Uuid::new_v4().simple());
    Some(move |s: &mut svc::Settings| {
        s.nats.url = url;
        s.nats.subject = subject;
    })
}

/// A card of `contract` rendered on `a` with `{ "n": 0 }` and subscribed on `b` with the token
/// `a` minted: its session id and the subscribed socket with its `ack`.
async fn rendered_on_a_subscribed_on_b(
    a: &TestApp,
    b: &str,
    intent: &str,
    contract: Value,
) -> (String, LiveClient, Value) {
    let hs = call(
        &a.base,
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let rendered = call(
        &a.base,
        "svc_render",
        json!({ "handshakeId": hs["structuredContent"]["handshakeId"], "props": { "n": 0 } }),
    )
    .await;
    let slice = rendered["_meta"]["ai.svc/render"].clone();
    let session = slice["sessionId"].as_str().unwrap().to_owned();
    let mut on_b = LiveClient::connect(b).await;
    on_b.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": slice["wsToken"] }),
    )
    .await;
    let ack = on_b.expect("ack").await;
    (session, on_b, ack)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frames_and_wake_ups_cross_replicas() {
    frames_and_wake_ups_cross_replicas_on(Backend::Postgres, "postgres", |_| {}).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frames_and_wake_ups_cross_replicas_on_nats() {
    if let Some(configure) = on_nats("frames_and_wake_ups_cross_replicas_on_nats").await {
        frames_and_wake_ups_cross_replicas_on(Backend::Postgres, "nats", configure).await;
    }
}

/// MariaDB has no bus of its own (README, "Choosing the database"): replicas on it share live frames through
/// NATS.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frames_and_wake_ups_cross_replicas_on_nats_over_mariadb() {
    if let Some(configure) = on_nats("frames_and_wake_ups_cross_replicas_on_nats_over_mariadb").await {
        frames_and_wake_ups_cross_replicas_on(Backend::Mariadb, "nats", configure).await;
    }
}

async fn frames_and_wake_ups_cross_replicas_on(
    backend: Backend,
    bus: &str,
    configure: impl FnOnce(&mut svc::Settings),
) {
    let Some(a) = TestApp::spawn_configured("replicas", backend, Auth::DevAllowAll, |s| {
        s.live.bus = bus.to_owned();
        configure(s);
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" } } },
        "actionSpec": { "go": {} },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "integer" } } }
    });
    // Subscribed on B with the token A minted.
    let (session, mut on_b, ack) = rendered_on_a_subscribed_on_b(&a, &b.base, "replicated", contract).await;
    let base_seq = ack["lastStreamSeq"].as_i64().unwrap();

    // Changes made on A reach B's socket, in order.
    call(
        &a.base,
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "n": 1 } }),
    )
    .await;
    for i in 0..5 {
        call(
            &a.base,
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": i }),
        )
        .await;
    }
    assert_eq!(on_b.expect("props_update").await["props"], json!({ "n": 1 }));
    for i in 0..5 {
        let d = on_b.expect("data").await;
        assert_eq!(
            (d["payload"].as_i64(), d["seq"].as_i64()),
            (Some(i), Some(base_seq + 1 + i))
        );
    }

    // A consume waiting on A wakes for an action that arrived on B.
    let waiting = {
        let base = a.base.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let r = call(&base, "svc_consume", json!({ "sessionId": session, "timeout": 20 })).await;
            (started.elapsed(), r)
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    on_b.send(
        "action",
        json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "go" }, "clientSeq": 1 }),
    )
    .await;
    assert_eq!(on_b.expect("system").await["event"], "action_stored");
    let (elapsed, consumed) = waiting.await.unwrap();
    assert!(elapsed < Duration::from_secs(5), "woke across replicas: {elapsed:?}");
    assert_eq!(consumed["structuredContent"]["events"][0]["intent"], "go");
    assert_eq!(
        on_b.expect("drain_ack").await["actionIds"].as_array().unwrap().len(),
        1,
        "the drain on A reaches B"
    );

    // Stopping A mid-stream loses nothing A acknowledged.
    let emitter = {
        let (base, session) = (a.base.clone(), session.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut acknowledged = vec![];
            for i in 5..200i64 {
                let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": { "name": "svc_emit", "arguments": { "sessionId": session, "channel": "log", "payload": i } } });
                let Ok(resp) = client
                    .post(format!("{base}/mcp"))
                    .bearer_auth("dev")
                    .json(&body)
                    .send()
                    .await
                else {
                    break;
                };
                let Ok(reply) = resp.json::<Value>().await else { break };
                if reply["result"]["structuredContent"]["accepted"] == true {
                    acknowledged.push(i);
                }
            }
            acknowledged
        })
    };
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut a = a;
    a.stop_server();
    let acknowledged = emitter.await.unwrap();
    assert!(!acknowledged.is_empty(), "A acknowledged some emits before it stopped");
    let mut resumed = LiveClient::connect(&b.base).await;
    resumed
        .send(
            "subscribe",
            json!({ "sessionId": session, "sessionToken": ack["sessionToken"], "fromSeq": base_seq }),
        )
        .await;
    resumed.expect("ack").await;
    let mut replayed = vec![];
    while let Some(frame) = resumed.try_recv(Duration::from_millis(500)).await {
        assert_eq!(frame["type"], "data", "{frame}");
        replayed.push(frame["payload"]["payload"].as_i64().unwrap());
    }
    let expected: Vec<i64> = (0..5).chain(acknowledged.iter().copied()).collect();
    for i in &expected {
        assert_eq!(
            replayed.iter().filter(|r| *r == i).count(),
            1,
            "acknowledged payload {i} replayed exactly once"
        );
    }
    // B keeps serving after A is gone.
    call(
        &b.base,
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": -1 }),
    )
    .await;
    assert_eq!(resumed.expect("data").await["payload"], -1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_broker_stops_start_up_with_one_line() {
    let mut settings = svc::Settings::load(None).expect("default settings");
    settings.server.port = 0;
    settings.server.data_dir = svc_tests::temp_dir("svc-nats-down");
    settings.live.bus = "nats".into();
    // Port 1 on loopback: nothing listens there.
    settings.nats.url = "nats://127.0.0.1:1".into();
    let error = match svc::Application::build(&settings).await {
        Ok(_) => panic!("a server started without its broker"),
        Err(e) => e.to_string(),
    };
    assert!(
        error.contains("live.bus = \"nats\": cannot reach NATS at nats://127.0.0.1:1"),
        "{error}"
    );
    assert!(!error.contains('\n'), "one line: {error}");
    let _ = std::fs::remove_dir_all(&settings.server.data_dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_blueprint_deleted_on_one_replica_is_not_served_by_another() {
    a_blueprint_deleted_on_one_replica_is_not_served_by_another_on("postgres", |_| {}).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_blueprint_deleted_on_one_replica_is_not_served_by_another_on_nats() {
    if let Some(configure) = on_nats("a_blueprint_deleted_on_one_replica_is_not_served_by_another_on_nats").await {
        a_blueprint_deleted_on_one_replica_is_not_served_by_another_on("nats", configure).await;
    }
}

/// Replicas keep the blueprints they read for up to a second; a change on one replica reaches
/// the others over the bus at once. B reuses a blueprint (and keeps it), A deletes it, and B's
/// next render a moment later (well inside that second) generates a new component instead.
async fn a_blueprint_deleted_on_one_replica_is_not_served_by_another_on(
    bus: &str,
    configure: impl FnOnce(&mut svc::Settings),
) {
    let Some(a) = TestApp::spawn_configured("replica-blueprints", Backend::Postgres, Auth::Strict, |s| {
        s.live.bus = bus.to_owned();
        configure(s);
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    // A key both replicas know: issued into the shared database (a keys file is per server).
    let ops = crate::ops_support::Client::of(&a);
    let issued = ops
        .ok("svc_ops_issue_connector_key", json!({ "name": "replicas" }))
        .await;
    let key = issued["plaintextKey"].as_str().unwrap().to_owned();
    let ops = crate::ops_support::Client {
        bearer: Some(key.clone()),
        ..ops
    };
    let call_on = |base: &str, tool: &'static str, arguments: Value| {
        let (base, key) = (base.to_owned(), key.clone());
        async move { call_as(&base, &key, tool, arguments).await["structuredContent"].clone() }
    };
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] }
    });
    let draft = json!({ "intent": "replicated title card", "blueprintDraft": { "contract": contract } });
    let on_a = call_on(&a.base, "svc_handshake", draft.clone()).await;
    let first = call_on(
        &a.base,
        "svc_render",
        json!({ "handshakeId": on_a["handshakeId"], "props": { "title": "one" } }),
    )
    .await;
    let cached = first["blueprintId"].as_str().unwrap().to_owned();

    // B reuses it (and keeps it), then A's operator deletes it.
    let reused = call_on(&b.base, "svc_handshake", draft.clone()).await;
    let reused = call_on(
        &b.base,
        "svc_render",
        json!({ "handshakeId": reused["handshakeId"], "props": { "title": "two" } }),
    )
    .await;
    assert_eq!(reused["blueprintId"], cached.as_str(), "{reused}");
    let hs = call_on(&b.base, "svc_handshake", draft.clone()).await;
    assert_eq!(
        hs["suggestion"]["blueprintMeta"]["blueprintId"],
        cached.as_str(),
        "{hs}"
    );
    assert_eq!(
        ops.ok("svc_ops_delete_blueprint", json!({ "blueprintId": cached }))
            .await,
        json!({ "deleted": true })
    );
    tokio::time::sleep(Duration::from_millis(300)).await;

    let rendered = call_on(
        &b.base,
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": { "title": "three" } }),
    )
    .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    assert_ne!(
        rendered["blueprintId"],
        cached.as_str(),
        "B did not serve the deleted component"
    );
    assert_eq!(rendered["cache"]["hit"], false, "{rendered}");
    let again = call_on(&b.base, "svc_handshake", draft).await;
    assert_eq!(
        again["suggestion"]["blueprintMeta"]["blueprintId"],
        rendered["blueprintId"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_card_is_told_to_resubscribe_when_its_replicas_bus_may_have_lost_events() {
    let Some(a) = TestApp::spawn_configured("replicas_missed", Backend::Postgres, Auth::DevAllowAll, |s| {
        s.live.bus = "postgres".to_owned();
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" } } } });
    let (session, mut on_b, ack) = rendered_on_a_subscribed_on_b(&a, &b.base, "missed events", contract).await;

    // Every listener of this database loses its connection (a database restart, a proxy's idle
    // cut): what A announced meanwhile may never reach B, so B's card is told to catch up.
    let admin = sea_orm::Database::connect(a.settings.server.database_url.as_str())
        .await
        .unwrap();
    let cut = admin
        .query_all_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND query ILIKE 'LISTEN %' AND pid <> pg_backend_pid()",
        ))
        .await
        .unwrap();
    assert!(!cut.is_empty(), "the replicas' listeners were cut");
    let told = on_b
        .next_or_why(Duration::from_secs(10))
        .await
        .unwrap_or_else(|why| panic!("B's card was not told: {why}"));
    assert_eq!(told["type"], "system", "{told}");
    assert_eq!(told["payload"]["event"], "lagged", "{told}");
    assert!(
        told["payload"]["message"]
            .as_str()
            .unwrap()
            .contains("resubscribe with fromSeq")
    );
    on_b.expect_silence(Duration::from_millis(500)).await;

    // The card resubscribes as after any `lagged`, and gets the props as they are now.
    call(
        &a.base,
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "n": 7 } }),
    )
    .await;
    let mut again = LiveClient::connect(&b.base).await;
    again
        .send(
            "subscribe",
            json!({ "sessionId": session, "sessionToken": ack["sessionToken"], "fromSeq": ack["lastStreamSeq"] }),
        )
        .await;
    let resumed = again.expect("ack").await;
    assert_eq!(resumed["props"], json!({ "n": 7 }), "{resumed}");
}

/// `resources/read` of `session` at `base`: the card document's embedded bootstrap.
async fn card_bootstrap(base: &str, session: &str) -> Value {
    let reply = rpc(
        base,
        "dev",
        "resources/read",
        json!({ "uri": format!("ui://svc/render/{session}") }),
    )
    .await;
    let html = reply["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"));
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// Replicas on PostgreSQL keep session rows in memory; each read first hears the announcements
/// of every write another replica acknowledged. B reads a card (keeping its row, and knowing it
/// has no gesture waiting) between writes on A, and every read on B, made as soon as A answered,
/// shows A's last write: an update in the card document, a gesture in the session's sequence and
/// in `svc_consume`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_reads_every_write_another_replica_acknowledged() {
    let Some(a) =
        TestApp::spawn_configured("replica_session_reads", Backend::Postgres, Auth::DevAllowAll, |_| {}).await
    else {
        return;
    };
    let b = a.replica().await;
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" } } },
        "actionSpec": { "go": {} }
    });
    let (session, _on_b, ack) = rendered_on_a_subscribed_on_b(&a, &b.base, "kept on replicas", contract).await;
    let mut on_a = LiveClient::connect(&a.base).await;
    on_a.send(
        "subscribe",
        json!({ "sessionId": session, "sessionToken": ack["sessionToken"] }),
    )
    .await;
    on_a.expect("ack").await;
    for n in 1..=15i64 {
        assert_eq!(
            call(&b.base, "svc_consume", json!({ "sessionId": session, "timeout": 0 })).await["structuredContent"]["events"],
            json!([]),
            "B knows the session quiet"
        );
        call(
            &a.base,
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "n": n } }),
        )
        .await;
        assert_eq!(
            card_bootstrap(&b.base, &session).await["props"],
            json!({ "n": n }),
            "update {n}"
        );

        on_a.send(
            "action",
            json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "go" }, "clientSeq": n }),
        )
        .await;
        // The socket also hears A's updates; the gesture is stored once the system frame says so.
        let stored = loop {
            let frame = on_a.recv().await;
            if frame["type"] == "system" {
                break frame["payload"]["event"].clone();
            }
        };
        assert_eq!(stored, "action_stored");
        let read = call(&b.base, "svc_get_session", json!({ "sessionId": session })).await;
        assert_eq!(read["structuredContent"]["eventSequence"], n, "gesture {n}: {read}");
        let consumed = call(&b.base, "svc_consume", json!({ "sessionId": session, "timeout": 0 })).await;
        assert_eq!(
            consumed["structuredContent"]["events"].as_array().map(Vec::len),
            Some(1),
            "gesture {n}: {consumed}"
        );
    }
}

/// A payload and props over NATS's message limit (`max_payload`, 1 MiB by default) made on A
/// reach a card subscribed on B whole: the bus carries a marker, B reads them from the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_large_emit_and_large_props_cross_replicas_on_nats() {
    let Some(configure) = on_nats("a_large_emit_and_large_props_cross_replicas_on_nats").await else {
        return;
    };
    let Some(a) = TestApp::spawn_configured("replicas", Backend::Postgres, Auth::DevAllowAll, |s| {
        s.live.bus = "nats".to_owned();
        configure(s);
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" }, "text": { "type": "string" } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    });
    let (session, mut on_b, ack) = rendered_on_a_subscribed_on_b(&a, &b.base, "large across", contract).await;
    let base_seq = ack["lastStreamSeq"].as_i64().unwrap();
    let over_a_nats_message = |seed: &str| -> String { seed.chars().cycle().take(1536 * 1024).collect() };

    let large = over_a_nats_message("abcdefghij");
    for payload in [large.as_str(), "after"] {
        call(
            &a.base,
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": payload }),
        )
        .await;
    }
    let d = on_b.expect("data").await;
    assert_eq!(d["seq"].as_i64(), Some(base_seq + 1));
    assert!(
        d["payload"].as_str() == Some(large.as_str()),
        "the large payload reached B whole"
    );
    let d = on_b.expect("data").await;
    assert_eq!(
        (d["seq"].as_i64(), d["payload"].as_str()),
        (Some(base_seq + 2), Some("after"))
    );

    let text = over_a_nats_message("0123456789");
    call(
        &a.base,
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "n": 1, "text": text } }),
    )
    .await;
    let p = on_b.expect("props_update").await;
    assert!(
        p == json!({ "sessionId": session, "props": { "n": 1, "text": text }, "epoch": 2 }),
        "the large props reached B whole"
    );
}
