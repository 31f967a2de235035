//! The polling fallback (`/_svc/poll/<sessionId>`): the same frames as the socket, for a card that
//! cannot hold one.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{action, card, poll, polling_url};

on_every_backend!(Auth::DevAllowAll => the_polling_fallback_carries_the_same_frames);

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
