//! What an agent changes on a rendered session: `svc_update` (replace, RFC 7396 merge, a new
//! epoch), `svc_amend` (in place) and `svc_emit` on the contract's channels.

use serde_json::json;
use svc_tests::{Auth, TestApp, on_every_backend};

use crate::agent_tools::support::rendered;

on_every_backend!(Auth::DevAllowAll =>
    merge_updates_apply_rfc7396,
    amend_repaints_in_place,
    emit_validates_channel_payload_and_completion,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll => update_moves_the_epoch_and_freezes_history);

async fn update_moves_the_epoch_and_freezes_history(app: TestApp) {
    let session = rendered(&app, json!({ "title": "v1" })).await;
    let up = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(up["updated"], true);
    assert_eq!(up["epoch"], 2);
    assert_eq!(up["resourceUri"], format!("ui://svc/render/{session}#2"));
    assert!(up["propsSchemaHash"].is_string());
    let same = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(same["updated"], false);
    assert_eq!(same["epoch"], 2);
    assert!(same["warning"].is_string());
    let bad = app
        .tool_error_result(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": 1 } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
    let missing = app
        .tool_rpc_error("svc_update", json!({ "sessionId": session, "kind": "replace" }))
        .await;
    assert!(missing["message"].as_str().unwrap().contains("props"));
    // Document 1: `patch` is required with `kind: merge`; `kind` is `replace` or `merge`.
    for (arguments, field) in [
        (json!({ "sessionId": session, "kind": "merge" }), "patch"),
        (
            json!({ "sessionId": session, "kind": "patch", "props": { "title": "v3" } }),
            "kind",
        ),
    ] {
        let refused = app.tool_rpc_error("svc_update", arguments.clone()).await;
        assert_eq!(refused["code"], -32602, "{arguments}: {refused}");
        assert!(
            refused["message"].as_str().unwrap().contains(field),
            "{arguments}: the message names `{field}`: {refused}"
        );
    }
    // An integer written as a float (`5.0`, as some clients serialise every number) is the
    // integer the published schema lets through.
    let floated = app
        .tool_ok("svc_consume", json!({ "sessionId": session, "timeout": 0.0 }))
        .await;
    assert_eq!(floated["status"], "active", "{floated}");
    let frozen = app
        .rpc(
            "resources/read",
            json!({ "uri": format!("ui://svc/render/{session}#1") }),
        )
        .await
        .1;
    assert!(
        frozen["result"]["contents"][0]["text"].as_str().unwrap().contains("v1"),
        "{frozen}"
    );
}

async fn merge_updates_apply_rfc7396(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t", "items": [{ "sku": "a", "qty": 1 }] })).await;
    app.tool_ok(
        "svc_update",
        json!({ "sessionId": session, "kind": "merge", "patch": { "items": null, "title": "u" } }),
    )
    .await;
    let src = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": session }))
        .await;
    assert_eq!(src["blueprint"]["fixtureProps"], json!({ "title": "u" }));
    let bad = app
        .tool_error_result(
            "svc_update",
            json!({ "sessionId": session, "kind": "merge", "patch": { "title": null } }),
        )
        .await;
    assert_eq!(
        bad["error"]["code"], "contract_violation",
        "post-merge props lose the required title"
    );
}

async fn amend_repaints_in_place(app: TestApp) {
    let session = rendered(&app, json!({ "title": "v1" })).await;
    let a = app
        .tool_ok(
            "svc_amend",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v1b" } }),
        )
        .await;
    assert_eq!(a["updated"], true);
    assert_eq!(a["resourceUri"], format!("ui://svc/render/{session}"));
    assert!(a.get("epoch").is_none());
    let up = app
        .tool_ok(
            "svc_update",
            json!({ "sessionId": session, "kind": "replace", "props": { "title": "v2" } }),
        )
        .await;
    assert_eq!(up["epoch"], 2, "amend did not move the epoch");
}

async fn emit_validates_channel_payload_and_completion(app: TestApp) {
    let session = rendered(&app, json!({ "title": "t" })).await;
    let ok = app
        .tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": "line 1" }),
        )
        .await;
    assert_eq!(ok, json!({ "accepted": true }));
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "done", "complete": true }),
    )
    .await;
    let undeclared = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": session, "channel": "nope", "payload": 1 }),
        )
        .await;
    assert!(undeclared["message"].as_str().unwrap().contains("channel"));
    let not_completable = app
        .tool_rpc_error(
            "svc_emit",
            json!({ "sessionId": session, "channel": "status", "payload": { "pct": 1 }, "complete": true }),
        )
        .await;
    assert!(not_completable["message"].as_str().unwrap().contains("complete"));
    let bad = app
        .tool_error_result(
            "svc_emit",
            json!({ "sessionId": session, "channel": "status", "payload": { "pct": "x" } }),
        )
        .await;
    assert_eq!(bad["error"]["code"], "contract_violation");
}
