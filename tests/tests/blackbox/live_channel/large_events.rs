//! Large emits and props (past the size that travels in a bus event, 64 KiB of JSON) reach a
//! mounted card whole and in order with the small ones around them: the bus carries a marker
//! and the socket reads them from the store.

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::live_channel::support::{card, subscribed};

on_every_backend!(Auth::DevAllowAll => large_emits_and_props_reach_the_card_whole_and_in_order);

/// A string of `bytes` characters that are not all alike, so a cut or a mix-up shows.
fn text_of(bytes: usize, seed: &str) -> String {
    seed.chars().cycle().take(bytes).collect()
}

async fn large_emits_and_props_reach_the_card_whole_and_in_order(app: TestApp) {
    let (session, slice) = card(&app).await;
    let (mut ws, ack) = subscribed(&app, &slice, json!({})).await;
    let base = ack["lastStreamSeq"].as_i64().unwrap();
    let large = text_of(300 * 1024, "abcdefghij");
    let payloads: Vec<Value> = vec![json!("before"), json!(large), json!("after")];
    for payload in &payloads {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": payload }),
        )
        .await;
    }
    for (i, payload) in payloads.iter().enumerate() {
        let d = ws.expect("data").await;
        assert_eq!(
            (d["seq"].as_i64(), d["channel"].as_str(), d["mode"].as_str()),
            (Some(base + 1 + i as i64), Some("log"), Some("append"))
        );
        assert!(d["payload"] == *payload, "payload {i} arrived whole");
    }

    let title = text_of(200 * 1024, "0123456789");
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": title } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert!(
        p == json!({ "sessionId": session, "props": { "title": title }, "epoch": 2 }),
        "large props arrived whole, at their epoch"
    );
    // An amend keeps the epoch; a small update after it travels in its event.
    let amended = text_of(100 * 1024, "zyx");
    app.tool_ok(
        "svc_amend",
        json!({ "sessionId": session, "kind": "merge", "patch": { "title": amended } }),
    )
    .await;
    let p = ws.expect("props_update").await;
    assert!(
        p == json!({ "sessionId": session, "props": { "title": amended }, "epoch": 2 }),
        "amended large props arrived whole"
    );
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "replace", "props": { "title": "small" } }),
    )
    .await;
    assert_eq!(
        ws.expect("props_update").await,
        json!({ "sessionId": session, "props": { "title": "small" }, "epoch": 3 })
    );
}
