//! `GET /_svc/playground`, the operator's local MCP-Apps host page (docs/playground.md): served on
//! a loopback listener or in dev mode, 404 on a strict server facing a network; a strict policy
//! and no inline script; the page signs in with a key unless the server is open; the card frame's
//! document is the render's `ui://` resource under its declared policy, granted by the session's
//! wsToken only, and a frame read while the CPU gate is busy is told so (503 `SERVER_BUSY` with
//! `Retry-After`), not "not found"; `svc_render`'s text and the banner name the page when (and
//! only when) it is served.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::process::ServerProcess;
use svc_tests::{Auth, Backend, TestApp, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } },
    })
}

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client.get(format!("{}{path}", app.base)).send().await.expect("GET")
}

/// Renders a card; returns its session id and the wsToken `svc_list_sessions` gives for it.
async fn rendered_session(app: &TestApp) -> (String, String, Value) {
    let rendered = app
        .render("playground", contract(), json!({ "title": "Order 42" }))
        .await;
    let session_id = rendered["sessionId"].as_str().expect("sessionId").to_owned();
    let listed = app.tool_ok("svc_list_sessions", json!({})).await;
    let row = listed["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|row| row["sessionId"] == session_id.as_str())
        .expect("the render is listed")
        .clone();
    let token = row["wsToken"]
        .as_str()
        .expect("an active session has a wsToken")
        .to_owned();
    (session_id, token, rendered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_loopback_server_serves_the_page_under_a_strict_policy_with_a_key_sign_in() {
    let Some(app) = TestApp::spawn("playground_strict", Backend::Sqlite, Auth::Strict).await else {
        return;
    };
    let page = get(&app, "/_svc/playground").await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{directive} in {policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(
        html.contains("data-auth=\"key\""),
        "a strict server asks for a key: {html}"
    );
    // Every script is a file of this origin: nothing inline for the policy to refuse.
    for tag in html.split("<script").skip(1) {
        let open = tag.split('>').next().unwrap_or_default();
        assert!(
            open.contains("src=\"/_svc/playground/"),
            "inline or foreign script: <script{open}>"
        );
    }
    let script = get(&app, "/_svc/playground/playground.js").await;
    assert_eq!(script.status(), StatusCode::OK);
    assert_eq!(script.headers()["content-type"], "text/javascript; charset=utf-8");
    assert!(script.text().await.unwrap().contains("svc_consume"));
    let css = get(&app, "/_svc/playground/playground.css").await;
    assert_eq!(css.status(), StatusCode::OK);
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");

    // The pair code the page exchanges: /_svc/pair's key works on /mcp, as the page uses it.
    let code = app.pair_code.clone().expect("strict mode prints a pair code");
    let paired: Value = app
        .client
        .post(format!("{}/_svc/pair", app.base))
        .json(&json!({ "pairCode": code, "clientName": "playground" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let key = paired["accessToken"].as_str().expect("accessToken");
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_list_sessions", "arguments": {} } });
    let (status, _, answer) = app.post_raw(Some(key), body.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["result"]["structuredContent"]["sessions"].is_array(), "{answer}");
    let (status, _, _) = app.post_raw(None, body.to_string()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the page's calls need the key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_mode_page_is_open_and_the_render_text_points_to_it() {
    let Some(app) = TestApp::spawn("playground_dev", Backend::Sqlite, Auth::DevAllowAll).await else {
        return;
    };
    let html = get(&app, "/_svc/playground").await.text().await.unwrap();
    assert!(html.contains("data-auth=\"open\""), "{html}");
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "playground", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Order 42" } }),
        )
        .await;
    let session_id = body["result"]["structuredContent"]["sessionId"].as_str().unwrap();
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    let link = format!("{}/_svc/playground#{session_id}", app.base);
    assert!(text.contains(&link), "{text} names {link}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_frame_is_the_resource_under_its_declared_policy_for_its_token_only() {
    let Some(app) = TestApp::spawn("playground_card", Backend::Sqlite, Auth::DevAllowAll).await else {
        return;
    };
    let (session_id, token, _) = rendered_session(&app).await;
    let (other_id, other_token, _) = rendered_session(&app).await;
    let declared = app
        .rpc(
            "resources/read",
            json!({ "uri": format!("ui://svc/render/{session_id}") }),
        )
        .await
        .1;
    let connects: Vec<String> = declared["result"]["contents"][0]["_meta"]["ui"]["csp"]["connectDomains"]
        .as_array()
        .expect("declared connectDomains")
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect();

    let frame = get(&app, &format!("/_svc/playground/card/{session_id}?token={token}")).await;
    assert_eq!(frame.status(), StatusCode::OK);
    assert_eq!(frame.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(frame.headers()["referrer-policy"], "no-referrer");
    let policy = frame.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(
        policy.contains(&format!("connect-src {}", connects.join(" "))),
        "the declared connectDomains: {policy}"
    );
    assert!(policy.contains("frame-ancestors 'self'"), "{policy}");
    // Opened as a tab of its own (a link a card asked its host to open), the component still
    // runs on an opaque origin, not on the server's where the console's session is.
    assert!(policy.contains("sandbox allow-scripts allow-forms"), "{policy}");
    assert!(!policy.contains("allow-same-origin"), "{policy}");
    let html = frame.text().await.unwrap();
    assert!(html.contains("id=\"svc-bootstrap\""), "the per-render document");
    assert!(html.contains(&session_id));

    for (path, why) in [
        (
            format!("/_svc/playground/card/{session_id}?token={other_token}"),
            "another session's token",
        ),
        (
            format!("/_svc/playground/card/{other_id}?token=forged"),
            "a forged token",
        ),
    ] {
        let refused = get(&app, &path).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{why}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "AUTH_FAILED", "{why}");
    }
    let missing = get(&app, &format!("/_svc/playground/card/{session_id}")).await;
    assert_eq!(missing.status(), StatusCode::BAD_REQUEST, "no token at all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_server_on_every_interface_serves_no_playground_and_names_none() {
    let Some(app) = TestApp::spawn_configured("playground_exposed", Backend::Sqlite, Auth::Strict, |settings| {
        settings.server.host = "0.0.0.0".into()
    })
    .await
    else {
        return;
    };
    let base = app.base.replace("0.0.0.0", "127.0.0.1");
    for path in [
        "/_svc/playground",
        "/_svc/playground/",
        "/_svc/playground/playground.js",
        "/_svc/playground/playground.css",
        "/_svc/playground/card/any?token=x",
    ] {
        let response = app.client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "playground", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Order 42" } }),
        )
        .await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("playground"), "{text}");
}

/// Cards whose frames are read at once, each for the first time: with one CPU slot, the building
/// of one card's document (or the parse of its large stored row) holds the slot while the others
/// ask for it.
const CARDS_AT_ONCE: usize = 4;
/// Bursts tried: the reads of one burst may, rarely, each find the slot free.
const BURSTS: usize = 3;

/// Props of about a megabyte: a document that takes a while to build.
fn large_props(n: usize) -> Value {
    json!({ "title": format!("card {n}"), "text": "<&>".repeat(350_000) })
}

/// `CARDS_AT_ONCE` cards rendered with large props, with their frames' paths.
async fn large_cards(app: &TestApp, contract: &Value) -> Vec<(String, String)> {
    let mut sessions = Vec::new();
    for n in 0..CARDS_AT_ONCE {
        let handshake = app
            .tool_ok(
                "svc_handshake",
                json!({ "intent": "large card", "blueprintDraft": { "contract": contract } }),
            )
            .await;
        // Sent raw: the harness checks every answer against the tool's schema, slowly for these.
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_render",
            "arguments": { "handshakeId": handshake["handshakeId"], "props": large_props(n) } } });
        let (status, _, answer) = app.post_raw(Some(&app.bearer), body.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{}", answer["error"]);
        sessions.push(
            answer["result"]["structuredContent"]["sessionId"]
                .as_str()
                .unwrap_or_else(|| panic!("{}", answer.to_string().chars().take(600).collect::<String>()))
                .to_owned(),
        );
    }
    let listed = app.tool_ok("svc_list_sessions", json!({})).await;
    sessions
        .into_iter()
        .map(|session| {
            let token = listed["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|row| row["sessionId"] == session.as_str())
                .and_then(|row| row["wsToken"].as_str())
                .expect("a listed active session has a wsToken")
                .to_owned();
            let path = format!("/_svc/playground/card/{session}?token={token}");
            (session, path)
        })
        .collect()
}

/// A card whose document cannot get a CPU slot in time answers 503 `SERVER_BUSY` with
/// `Retry-After`, as `resources/read` does, and the same card is served once the slot is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_read_while_the_cpu_gate_is_busy_is_told_to_retry_not_that_it_is_missing() {
    let app = super::cpu_gate::one_slot_server("playground_busy").await;
    let contract = json!({ "propsSpec": { "type": "object", "properties": {
        "title": { "type": "string" }, "text": { "type": "string" } } } });
    let mut busy = None;
    for _ in 0..BURSTS {
        let cards = large_cards(&app, &contract).await;
        let frames = futures_util::future::join_all(cards.iter().map(|(_, path)| get(&app, path))).await;
        for ((session, path), frame) in cards.into_iter().zip(frames) {
            match frame.status() {
                StatusCode::OK => {}
                StatusCode::SERVICE_UNAVAILABLE => busy = Some((session, path, frame)),
                other => panic!("{other}: {}", frame.text().await.unwrap_or_default()),
            }
        }
        if busy.is_some() {
            break;
        }
    }
    let (session, path, frame) = busy.expect("one slot cannot build several cards at once");
    assert_eq!(frame.headers()["retry-after"], "1", "1 ms of wait rounds up to 1 s");
    let body: Value = frame.json().await.unwrap();
    assert_eq!(
        body,
        json!({ "error": { "code": "SERVER_BUSY", "message": "Server busy with other heavy work; retry later", "retryAfterSeconds": 1 } })
    );
    let retried = get(&app, &path).await;
    assert_eq!(retried.status(), StatusCode::OK, "the slot is free again");
    assert!(retried.text().await.unwrap().contains(&session));
}

#[test]
fn the_banner_names_the_playground_only_when_it_is_served() {
    let data_dir = temp_dir("svc-playground-banner");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let banner = server.banner();
    assert!(
        banner.contains(&format!("  playground:    {}/_svc/playground", server.base)),
        "{banner}"
    );
    drop(server);
    let exposed = ServerProcess::start(BINARY, &data_dir, &["--host", "0.0.0.0"]);
    let banner = exposed.banner();
    assert!(
        banner.contains(&format!(
            "  auth:          strict; mint a bearer with `svc keys mint --data-dir {}`",
            data_dir.display()
        )),
        "the banner names the data directory to paste: {banner}"
    );
    assert!(!banner.contains("  playground:"), "{banner}");
    drop(exposed);
    let _ = std::fs::remove_dir_all(&data_dir);
}
