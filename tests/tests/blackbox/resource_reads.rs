//! `resources/read` of a render is served from a document serialised once per state of the
//! session: every amend, update, gesture and emit is still visible in the next read, and every
//! read embeds a live token that works. A client that accepts gzip gets the same document
//! gzipped (decoded here by Debian's `gzip`, not by our code).

use serde_json::{Value, json};
use svc_tests::external::gunzip;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(sole, Auth::DevAllowAll =>
    a_render_read_follows_every_change_of_its_session,
    a_client_that_accepts_gzip_gets_the_same_document_gzipped,
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
    split_document(&read).1
}

/// A `resources/read` answer's document without its bootstrap, and the bootstrap.
fn split_document(read: &Value) -> (String, Value) {
    let html = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{read}"));
    assert!(html.contains("<script type=\"module\">"), "the runtime is inlined");
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let rest = format!("{}{}", &html[..start], &html[end..]);
    (rest, serde_json::from_str(&html[start..end]).unwrap())
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

/// `resources/read` of `uri` as request `id`, with the given `Accept-Encoding`.
async fn read_accepting(app: &TestApp, uri: &str, id: u32, accept_encoding: &str) -> reqwest::Response {
    let message = json!({ "jsonrpc": "2.0", "id": id, "method": "resources/read", "params": { "uri": uri } });
    app.client
        .post(app.mcp_url())
        .bearer_auth(&app.bearer)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("accept-encoding", accept_encoding)
        .body(message.to_string())
        .send()
        .await
        .unwrap()
}

async fn a_client_that_accepts_gzip_gets_the_same_document_gzipped(app: TestApp) {
    let rendered = app
        .render("gzipped reads", contract(), json!({ "title": "packed" }))
        .await;
    let uri = format!("ui://svc/render/{}", rendered["sessionId"].as_str().unwrap());
    let plain = app.rpc("resources/read", json!({ "uri": uri })).await.1;
    let plain_length = plain.to_string().len();
    // Twice: the first deflates the kept pieces, the second reuses them.
    for id in [41, 42] {
        let response = read_accepting(&app, &uri, id, "gzip, deflate, br").await;
        assert_eq!(response.status(), 200);
        let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("content-encoding").as_deref(), Some("gzip"));
        assert_eq!(header("vary").as_deref(), Some("accept-encoding"));
        let packed = response.bytes().await.unwrap();
        assert!(
            packed.len() * 2 < plain_length,
            "gzipped {} bytes of {plain_length}",
            packed.len()
        );
        let read: Value = serde_json::from_slice(&gunzip(&packed)).expect("the gzipped body is JSON");
        assert_eq!(read["id"], id, "the envelope is this request's");
        // The same document; only the live token and its expiry are fresh per read.
        let (plain_rest, mut plain_boot) = split_document(&plain);
        let (rest, mut boot) = split_document(&read);
        assert_eq!(rest, plain_rest);
        assert_token_works(&app, &boot).await;
        for fresh in ["wsToken", "expiresAt"] {
            plain_boot.as_object_mut().unwrap().remove(fresh);
            boot.as_object_mut().unwrap().remove(fresh);
        }
        assert_eq!(boot, plain_boot);
        assert_eq!(
            read["result"]["contents"][0]["_meta"],
            plain["result"]["contents"][0]["_meta"]
        );
    }
    // A client that refuses gzip gets the document as it is.
    let response = read_accepting(&app, &uri, 43, "gzip;q=0, identity").await;
    assert!(response.headers().get("content-encoding").is_none());
    let read: Value = response.json().await.unwrap();
    assert_eq!(split_document(&read).0, split_document(&plain).0);
}
