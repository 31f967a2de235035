//! `resources/read` of a render is served from a document serialised once per state of the
//! session: every amend, update, gesture and emit is still visible in the next read, and every
//! read embeds a live token that works.

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll =>
    a_render_read_follows_every_change_of_its_session,
);

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    })
}

/// The bootstrap the document embeds, from `resources/read` of `uri`.
async fn bootstrap(app: &TestApp, uri: &str) -> Value {
    let read = app.rpc("resources/read", json!({ "uri": uri })).await.1;
    let html = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{read}"));
    assert!(html.contains("<script type=\"module\">"), "the runtime is inlined");
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The embedded `wsToken` opens the polling fallback of its session.
async fn assert_token_works(app: &TestApp, embedded: &Value) {
    let url = format!(
        "{}?token={}&wait=0",
        embedded["pollingUrl"].as_str().unwrap(),
        embedded["wsToken"].as_str().unwrap()
    );
    let response = app.client.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200, "the embedded token is live");
}

async fn a_render_read_follows_every_change_of_its_session(app: TestApp) {
    let rendered = app
        .render("reads follow changes", contract(), json!({ "title": "v1" }))
        .await;
    let session = rendered["sessionId"].as_str().unwrap().to_owned();
    let uri = format!("ui://svc/render/{session}");

    let first = bootstrap(&app, &uri).await;
    assert_eq!(
        (first["props"].clone(), first["epoch"].clone()),
        (json!({ "title": "v1" }), json!(1))
    );
    assert_eq!(first["lastSequence"], 0);
    assert_token_works(&app, &first).await;
    let again = bootstrap(&app, &uri).await;
    assert_eq!(again["props"], first["props"], "an unchanged session reads the same");
    assert_token_works(&app, &again).await;

    app.tool_ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v1b" } }),
    )
    .await;
    let amended = bootstrap(&app, &uri).await;
    assert_eq!(
        amended["props"],
        json!({ "title": "v1b" }),
        "an amend shows in the next read"
    );
    assert_eq!(amended["epoch"], 1);

    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
    )
    .await;
    let updated = bootstrap(&app, &uri).await;
    assert_eq!(
        (updated["props"].clone(), updated["epoch"].clone()),
        (json!({ "title": "v2" }), json!(2))
    );
    assert_eq!(updated["frozen"], false);
    let pinned = bootstrap(&app, &format!("{uri}#1")).await;
    assert_eq!(
        pinned["props"],
        json!({ "title": "v1b" }),
        "the frozen card keeps its props"
    );
    assert_eq!(pinned["frozen"], true);

    // A gesture through the polling fallback moves the event sequence the document carries.
    let post = format!(
        "{}?token={}",
        updated["pollingUrl"].as_str().unwrap(),
        updated["wsToken"].as_str().unwrap()
    );
    let gesture = json!({ "type": "action", "payload": { "sessionId": session, "type": "data:submit",
        "payload": { "action": "approve", "data": { "note": "ok" } }, "clientSeq": 1, "uiContext": {} } });
    let ack: Value = app
        .client
        .post(&post)
        .json(&gesture)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ack["frames"][0]["payload"]["event"], "action_stored", "{ack}");
    let after_gesture = bootstrap(&app, &uri).await;
    assert_eq!(
        after_gesture["lastSequence"], 1,
        "a stored gesture shows in the next read"
    );
    assert_eq!(after_gesture["props"], json!({ "title": "v2" }));

    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "line" }),
    )
    .await;
    let after_emit = bootstrap(&app, &uri).await;
    assert_eq!(after_emit["props"], json!({ "title": "v2" }));
    assert_eq!(after_emit["lastSequence"], 1);
    assert_token_works(&app, &after_emit).await;
}
