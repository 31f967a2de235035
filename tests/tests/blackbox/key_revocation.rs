//! Revoking a key ends what was opened with it: its sockets are closed within a second (an
//! `error` frame `KEY_REVOKED`, then close code 1008), on every replica, and the wsTokens and
//! session tokens minted under it are refused afterwards. Other keys' sockets stay open.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::Strict => revoking_a_key_ends_its_live_channels_and_tokens);

async fn rpc(base: &str, path: &str, bearer: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply: Value = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(reply["result"]["structuredContent"].is_object(), "{tool}: {reply}");
    reply["result"].clone()
}

/// A connector key issued through `/ops` by the test's own key: (key id, plaintext).
async fn issue_key(app: &TestApp) -> (String, String) {
    let issued = rpc(
        &app.base,
        "/ops",
        &app.bearer,
        "svc_ops_issue_connector_key",
        json!({ "name": "revocable" }),
    )
    .await;
    let issued = &issued["structuredContent"];
    (
        issued["id"].as_str().unwrap().to_owned(),
        issued["plaintextKey"].as_str().unwrap().to_owned(),
    )
}

async fn revoke_key(app: &TestApp, key_id: &str) {
    rpc(
        &app.base,
        "/ops",
        &app.bearer,
        "svc_ops_revoke_connector_key",
        json!({ "keyId": key_id }),
    )
    .await;
}

/// Renders a card with `bearer`; returns its `_meta['ai.svc/render']` slice.
async fn card(base: &str, bearer: &str) -> Value {
    let contract = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "go": {} } });
    let hs = rpc(
        base,
        "/mcp",
        bearer,
        "svc_handshake",
        json!({ "intent": "revocation", "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let rendered = rpc(
        base,
        "/mcp",
        bearer,
        "svc_render",
        json!({ "handshakeId": hs["structuredContent"]["handshakeId"], "props": {} }),
    )
    .await;
    rendered["_meta"]["ai.svc/render"].clone()
}

/// A socket on `base` subscribed with `credential` (`wsToken` or `sessionToken`); returns the ack.
async fn subscribe(base: &str, slice: &Value, credential: (&str, &Value)) -> (LiveClient, Value) {
    let mut ws = LiveClient::connect(base).await;
    let mut payload = json!({ "sessionId": slice["sessionId"] });
    payload[credential.0] = credential.1.clone();
    ws.send("subscribe", payload).await;
    let first = ws.recv().await;
    (ws, first)
}

/// Waits for the revocation's error frame and close.
async fn closed_as_revoked(ws: &mut LiveClient) {
    let wait = Duration::from_secs(3);
    let error = ws
        .next_or_why(wait)
        .await
        .unwrap_or_else(|why| panic!("an error frame: {why}"));
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["payload"]["code"], "KEY_REVOKED", "{error}");
    let close = ws
        .next_or_why(wait)
        .await
        .unwrap_or_else(|why| panic!("a close frame: {why}"));
    assert_eq!(close, json!({ "type": "_closed", "payload": 1008 }));
}

async fn revoking_a_key_ends_its_live_channels_and_tokens(app: TestApp) {
    let (key_id, key) = issue_key(&app).await;
    let slice = card(&app.base, &key).await;
    let (mut socket, ack) = subscribe(&app.base, &slice, ("wsToken", &slice["wsToken"])).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let session_token = ack["payload"]["sessionToken"].clone();
    let (mut by_bearer, ack) = {
        let mut ws = LiveClient::connect_with_bearer(&app.base, &key).await;
        ws.send("subscribe", json!({ "sessionId": slice["sessionId"] })).await;
        let first = ws.recv().await;
        (ws, first)
    };
    assert_eq!(ack["type"], "ack", "{ack}");
    // Another key's card is not touched.
    let other = card(&app.base, &app.bearer).await;
    let (mut unrelated, ack) = subscribe(&app.base, &other, ("wsToken", &other["wsToken"])).await;
    assert_eq!(ack["type"], "ack");

    // A long-poll of the fallback, held open, under the same key.
    let polling = format!(
        "{}?token={}",
        slice["pollingUrl"].as_str().unwrap(),
        slice["wsToken"].as_str().unwrap()
    );
    let first: Value = app
        .client
        .get(format!("{polling}&wait=0"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let c = &first["cursors"];
    let waiting = {
        let url = format!(
            "{polling}&revision={}&fromSeq={}&sinceSequence={}&wait=20",
            c["revision"], c["lastStreamSeq"], c["lastSequence"]
        );
        tokio::spawn(async move {
            let response = reqwest::get(url).await.unwrap();
            (Instant::now(), response.status())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;

    let revoked_at = Instant::now();
    revoke_key(&app, &key_id).await;
    for ws in [&mut socket, &mut by_bearer] {
        closed_as_revoked(ws).await;
        let took = revoked_at.elapsed();
        assert!(took < Duration::from_secs(1), "closed within a second: {took:?}");
    }
    let (answered_at, status) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the held long-poll ends refused");
    assert!(answered_at - revoked_at < Duration::from_secs(1), "within a second");
    unrelated.send("ping", Value::Null).await;
    assert_eq!(unrelated.recv().await["type"], "pong", "the other key's socket is open");

    // Every token minted under the key is refused from now on.
    for credential in [("wsToken", &slice["wsToken"]), ("sessionToken", &session_token)] {
        let (_, refused) = subscribe(&app.base, &slice, credential).await;
        assert_eq!(refused["type"], "error", "{refused}");
        assert_eq!(refused["payload"]["code"], "AUTH_FAILED", "{refused}");
    }
    let poll = app.client.get(format!("{polling}&wait=0")).send().await.unwrap();
    assert_eq!(poll.status(), StatusCode::UNAUTHORIZED);
    let action = json!({ "type": "action", "payload": { "type": "data:submit", "sessionId": slice["sessionId"], "payload": { "action": "go" } } });
    let post = app.client.post(&polling).json(&action).send().await.unwrap();
    assert_eq!(post.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_revocation_on_one_replica_closes_the_socket_on_another() {
    let Some(a) = TestApp::spawn("revocation_replicas", Backend::Postgres, Auth::Strict).await else {
        return;
    };
    let b = a.replica().await;
    let (key_id, key) = issue_key(&a).await;
    let slice = card(&a.base, &key).await;
    let (mut on_b, ack) = subscribe(&b.base, &slice, ("wsToken", &slice["wsToken"])).await;
    assert_eq!(ack["type"], "ack", "{ack}");

    let revoked_at = Instant::now();
    revoke_key(&a, &key_id).await;
    closed_as_revoked(&mut on_b).await;
    let took = revoked_at.elapsed();
    assert!(took < Duration::from_secs(1), "closed within a second: {took:?}");
    let (_, refused) = subscribe(&b.base, &slice, ("wsToken", &slice["wsToken"])).await;
    assert_eq!(refused["payload"]["code"], "AUTH_FAILED", "{refused}");
}

/// The status of `tools/list` on `base`'s `/mcp` with `bearer`.
async fn mcp_status(base: &str, bearer: &str) -> StatusCode {
    reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap()
        .status()
}

/// Each replica keeps an authenticated key in memory; a revocation on one replica reaches the
/// other's cache over the event bus, so the key is refused there too, within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_revoked_on_one_replica_is_refused_by_both_within_a_second() {
    let Some(a) = TestApp::spawn("revocation_cache_replicas", Backend::Postgres, Auth::Strict).await else {
        return;
    };
    let b = a.replica().await;
    let (key_id, key) = issue_key(&a).await;
    for replica in [&a.base, &b.base] {
        // Twice: the second answer comes from the replica's cache.
        assert_eq!(mcp_status(replica, &key).await, StatusCode::OK);
        assert_eq!(mcp_status(replica, &key).await, StatusCode::OK);
    }

    let revoked_at = Instant::now();
    revoke_key(&a, &key_id).await;
    assert_eq!(
        mcp_status(&a.base, &key).await,
        StatusCode::UNAUTHORIZED,
        "the revoking replica refuses the key at once"
    );
    while mcp_status(&b.base, &key).await != StatusCode::UNAUTHORIZED {
        assert!(
            revoked_at.elapsed() < Duration::from_secs(1),
            "the other replica still accepts the revoked key"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        mcp_status(&a.base, &a.bearer).await,
        StatusCode::OK,
        "other keys still work"
    );
}

/// Replicas whose bus does not reach each other (`live.bus = "in-process"` on one PostgreSQL
/// database) would not hear a revocation on another replica: they keep no key in memory, so the
/// key is refused on both at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_that_cannot_hear_each_other_refuse_a_revoked_key_at_once() {
    let Some(a) = TestApp::spawn_configured("revocation_no_bus", Backend::Postgres, Auth::Strict, |s| {
        s.live.bus = "in-process".into();
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    let (key_id, key) = issue_key(&a).await;
    for replica in [&a.base, &b.base] {
        assert_eq!(mcp_status(replica, &key).await, StatusCode::OK);
        assert_eq!(mcp_status(replica, &key).await, StatusCode::OK);
    }
    revoke_key(&a, &key_id).await;
    assert_eq!(
        mcp_status(&b.base, &key).await,
        StatusCode::UNAUTHORIZED,
        "the replica that heard nothing reads the key's row"
    );
    assert_eq!(mcp_status(&a.base, &key).await, StatusCode::UNAUTHORIZED);
}

/// A key that expires, or one revoked in the keys file, is announced nowhere: the replica asks
/// about the keys of its subscribed sockets every `live.key_recheck_seconds`, and every socket
/// under a key that no longer authenticates ends as on a revocation through `/ops`. A socket
/// under a key that stays live is not touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_that_expires_or_leaves_the_keys_file_ends_its_channels() {
    let app = TestApp::spawn_configured("revocation_unannounced", Backend::Sqlite, Auth::Strict, |s| {
        s.live.key_recheck_seconds = 1;
    })
    .await
    .unwrap();
    let keys = svc::keys_file::KeysFile::in_data_dir(&app.data_dir);
    let (entry, file_key) = keys.mint(Some("leaving".into()), chrono::Utc::now()).unwrap();
    let expires_at = chrono::Utc::now() + chrono::TimeDelta::seconds(4);
    let issued = rpc(
        &app.base,
        "/ops",
        &app.bearer,
        "svc_ops_issue_connector_key",
        json!({ "name": "expiring", "expiresAt": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) }),
    )
    .await;
    let expiring_key = issued["structuredContent"]["plaintextKey"].as_str().unwrap().to_owned();

    let mut sockets = Vec::new();
    for key in [&file_key, &file_key, &expiring_key, &app.bearer] {
        let slice = card(&app.base, key).await;
        let (ws, ack) = subscribe(&app.base, &slice, ("wsToken", &slice["wsToken"])).await;
        assert_eq!(ack["type"], "ack", "{ack}");
        sockets.push(ws);
    }
    let mut sockets = sockets.into_iter();
    let (mut from_file, mut also_from_file, mut expiring, mut staying) = (
        sockets.next().unwrap(),
        sockets.next().unwrap(),
        sockets.next().unwrap(),
        sockets.next().unwrap(),
    );

    // Still open while both keys authenticate.
    from_file.send("ping", Value::Null).await;
    assert_eq!(from_file.recv().await["type"], "pong");
    keys.revoke(&entry.id).unwrap();
    closed_as_revoked(&mut from_file).await;
    closed_as_revoked(&mut also_from_file).await;

    let left = (expires_at - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(left).await;
    closed_as_revoked(&mut expiring).await;

    staying.send("ping", Value::Null).await;
    assert_eq!(staying.recv().await["type"], "pong", "the live key's socket is open");
}
