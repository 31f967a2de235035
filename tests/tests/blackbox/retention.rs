//! The retention sweep (`[retention]`), seen from outside: a session past its grace answers as
//! Document 1 says for a session that no longer exists (-32002, "expired or deleted"), and
//! disappears from listings, and no row of it (frozen cards, gestures, deliveries) is left in the
//! database; a session's old events are trimmed to what a replay serves, so a
//! replay from an older cursor reports the gap even on a server replaying more, while every
//! gesture the agent had not drained is still consumed. An org invite that ended (here: revoked)
//! leaves its org's invite list once its grace is over, and its mailed link is unknown; a pending
//! one stays.

use std::time::Duration;

use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::smtp_sink::SmtpSink;
use svc_tests::{Auth, Backend, TestApp, on_both_backends};

use crate::hosted_support::accounts::{create_user, hosted_strict_app, mint_key};
use crate::ops_support::Client;

on_both_backends!(mariadb, sessions_past_their_grace_and_events_no_replay_serves_go);

/// How long the test waits for a sweep (each runs every second here).
const PATIENCE: Duration = Duration::from_secs(30);

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": {
            "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } }, "required": ["note"] } }
        },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    })
}

/// The server's lifetime of a card rendered without `ttlSeconds`: long enough to write under it.
const BRIEF_TTL_SECONDS: u64 = 5;

/// Tables holding a session's rows.
const SESSION_TABLES: [&str; 4] = ["sessions", "session_history", "action_events", "stream_envelopes"];

/// How many rows of each of [`SESSION_TABLES`] the database holds for `session`.
async fn stored_rows(app: &TestApp, session: &str) -> Vec<i64> {
    let db = Database::connect(&app.settings.database_url()).await.expect("connect");
    let mut counts = Vec::new();
    for table in SESSION_TABLES {
        let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE session_id = '{session}'");
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await
            .expect("count")
            .expect("a row");
        counts.push(row.try_get::<i64>("", "n").expect("a count"));
    }
    let _ = db.close().await;
    counts
}

/// Renders a card living `ttl_seconds` (the server's brief default without); returns its
/// session id and `_meta['ai.svc/render']` slice.
async fn card(app: &TestApp, ttl_seconds: Option<u64>) -> (String, Value) {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "retained card", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let mut render = json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } });
    if let Some(ttl) = ttl_seconds {
        render["ttlSeconds"] = json!(ttl);
    }
    let body = app.call("svc_render", render).await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    (slice["sessionId"].as_str().expect("a rendered card").to_owned(), slice)
}

async fn subscribed(app: &TestApp, slice: &Value, cursors: Value) -> (LiveClient, Value) {
    let mut ws = LiveClient::connect(&app.base).await;
    let mut payload = json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] });
    for (k, v) in cursors.as_object().unwrap() {
        payload[k] = v.clone();
    }
    ws.send("subscribe", payload).await;
    let ack = ws.expect("ack").await;
    (ws, ack)
}

/// Sends gesture `n` and waits until it is stored.
async fn gesture(ws: &mut LiveClient, session: &str, n: i64) {
    let action = json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "approve", "data": { "note": format!("n{n}") } }, "clientSeq": n });
    ws.send("action", action).await;
    ws.expect("system").await;
}

/// Waits until `svc_consume` of `session` answers -32002: a sweep deleted it.
async fn deleted(app: &TestApp, session: &str) {
    let started = std::time::Instant::now();
    loop {
        let body = app.call("svc_consume", json!({ "sessionId": session })).await;
        if body["error"]["code"] == -32002 {
            return;
        }
        let status = &body["result"]["structuredContent"]["status"];
        assert!(status == "active" || status == "expired", "{body}");
        assert!(
            started.elapsed() < PATIENCE,
            "a session past its grace still answers as expired: {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn sessions_past_their_grace_and_events_no_replay_serves_go(backend: Backend) {
    let test = "sessions_past_their_grace_and_events_no_replay_serves_go";
    let Some(mut app) = TestApp::spawn_configured(test, backend, Auth::DevAllowAll, |s| {
        s.sessions.default_ttl_seconds = BRIEF_TTL_SECONDS;
        s.retention.expired_session_days = 0;
        s.retention.sweep_interval_seconds = 1;
        s.retention.batch_rows = 2;
        s.live.replay_buffer = 3;
    })
    .await
    else {
        return;
    };

    // A card living an hour: six gestures the agent drains, four it has not yet, ten deliveries.
    let (kept, slice) = card(&app, Some(3600)).await;
    let (mut ws, _) = subscribed(&app, &slice, json!({})).await;
    for n in 1..=6 {
        gesture(&mut ws, &kept, n).await;
    }
    let drained = app.tool_ok("svc_consume", json!({ "sessionId": kept })).await;
    assert_eq!(drained["events"].as_array().unwrap().len(), 6);
    ws.expect("drain_ack").await;
    for n in 7..=10 {
        gesture(&mut ws, &kept, n).await;
    }
    for n in 1..=10 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": kept, "channel": "log", "payload": format!("line {n}") }),
        )
        .await;
    }
    drop(ws);

    // A brief card, written under while it lives (a frozen card, a gesture, a delivery): with no
    // grace the sweep after its expiry deletes it with all of them.
    let (brief, brief_slice) = card(&app, None).await;
    let (mut ws, _) = subscribed(&app, &brief_slice, json!({})).await;
    gesture(&mut ws, &brief, 1).await;
    let updated = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": brief, "kind": "replace", "props": { "title": "u" } }),
        )
        .await;
    assert_eq!(updated["epoch"], 2, "written while it lived: {updated}");
    ws.expect("props_update").await;
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": brief, "channel": "log", "payload": "brief line" }),
    )
    .await;
    ws.expect("data").await;
    drop(ws);
    assert_eq!(stored_rows(&app, &brief).await, [1, 1, 1, 1]);
    deleted(&app, &brief).await;
    assert_eq!(stored_rows(&app, &brief).await, [0, 0, 0, 0], "no row of it is left");
    for tool in ["svc_get_session", "svc_get_render_source"] {
        let err = app.tool_rpc_error(tool, json!({ "sessionId": brief })).await;
        assert_eq!(err["code"], -32002, "{tool}: {err}");
    }
    let read = app
        .rpc("resources/read", json!({ "uri": format!("ui://svc/render/{brief}") }))
        .await
        .1;
    assert_eq!(read["error"]["code"], -32002, "its card no longer mounts: {read}");
    let listed = app.tool_ok("svc_list_sessions", json!({})).await;
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sessionId"].as_str())
        .collect();
    assert_eq!(ids, [kept.as_str()], "only the live card is listed");

    // That sweep began after the writes above, and one that began after it ended deletes this
    // one: the first has trimmed the live card by then.
    let (later, _) = card(&app, None).await;
    deleted(&app, &later).await;

    // A server replaying more cannot replay what was trimmed: the gap is reported as ever.
    app.restart(|s| s.live.replay_buffer = 100).await;
    let (mut ws, ack) = subscribed(&app, &slice, json!({ "fromSeq": 0, "sinceSequence": 0 })).await;
    assert_eq!(ack["replay"]["gap"], true, "{}", ack["replay"]);
    assert_eq!(
        ack["replay"]["lost"],
        json!(["actions", "streams"]),
        "{}",
        ack["replay"]
    );
    let system = ws.expect("system").await;
    assert_eq!(system["event"], "replay_gap", "{system}");
    // Gestures 1..=6 were drained and older than the newest three: gone. The four undrained stay.
    let mut replayed = Vec::new();
    for _ in 7..=10 {
        replayed.push(ws.expect("render_event").await["sequence"].as_i64().unwrap());
    }
    assert_eq!(replayed, [7, 8, 9, 10], "every undrained gesture, oldest first");
    let last = ack["lastStreamSeq"].as_i64().unwrap();
    for seq in last - 2..=last {
        let frame = ws.expect("data").await;
        assert_eq!(frame["seq"].as_i64().unwrap(), seq, "the newest three deliveries");
    }
    assert_eq!(
        ws.try_recv(Duration::from_millis(300)).await,
        None,
        "nothing older was kept"
    );

    // The agent still consumes every gesture it had not seen.
    let consumed = app.tool_ok("svc_consume", json!({ "sessionId": kept })).await;
    assert_eq!(consumed["status"], "active");
    let notes: Vec<&str> = consumed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["actionData"]["note"].as_str().unwrap())
        .collect();
    assert_eq!(notes, ["n7", "n8", "n9", "n10"]);
}

/// The invite ids `svc_ops_list_orgs` lists for the owner's one org.
async fn listed_invites(owner: &Client) -> Vec<String> {
    let listed = owner.ok("svc_ops_list_orgs", json!({})).await;
    listed["orgs"][0]["invites"]
        .as_array()
        .expect("an administered org lists its invites")
        .iter()
        .map(|invite| invite["inviteId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_ended_invite_leaves_its_orgs_list_after_its_grace_with_its_link() {
    let test = "an_ended_invite_leaves_its_orgs_list_after_its_grace";
    let Some(sink) = SmtpSink::start(test, 0) else {
        return;
    };
    let url = sink.url();
    let Some(app) = hosted_strict_app(test, move |s| {
        s.mail.smtp_url = url;
        s.mail.from = "svc tests <svc@example.org>".into();
        s.mail.poll_seconds = 1;
        s.mail.retry_base_seconds = 1;
        s.retention.expired_session_days = 0;
        s.retention.sweep_interval_seconds = 1;
    })
    .await
    else {
        return;
    };
    let db = app.settings.database_url();
    create_user(&db, "owner@example.org", "correct horse battery staple");
    let owner = Client::with_bearer(&app, &mint_key(&db, "owner@example.org", None));
    let org = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let invite = |email: &str| {
        let (owner, org, email) = (&owner, &org, email.to_owned());
        async move {
            owner
                .ok(
                    "svc_ops_invite_to_org",
                    json!({ "orgId": org["orgId"], "email": email, "role": "member" }),
                )
                .await["inviteId"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let revoked = invite("ada@example.org").await;
    let pending = invite("bob@example.org").await;
    let mail = sink
        .wait_for("ada@example.org", "You are invited to an organisation", PATIENCE)
        .await;
    let link = mail.link("/account/invite?token=").expect("an invite link");
    owner.ok("svc_ops_revoke_invite", json!({ "inviteId": revoked })).await;

    // With no grace, a sweep after the revocation deletes the invite and its link.
    let started = std::time::Instant::now();
    while listed_invites(&owner).await.contains(&revoked) {
        assert!(
            started.elapsed() < PATIENCE,
            "a revoked invite is still listed past its grace"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(listed_invites(&owner).await, [pending], "the pending one stays");
    owner
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": revoked }),
            "org_invite_not_found",
        )
        .await;
    let opened = app.client.get(&link).send().await.unwrap();
    assert_eq!(opened.status(), reqwest::StatusCode::NOT_FOUND, "the link is unknown");
}
