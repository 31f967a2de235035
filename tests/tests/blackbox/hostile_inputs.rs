//! Issue 13's critical attacks, each built as the issue describes it: one request must never take
//! the server down. A contract or component over a complexity budget (docs/budgets.md) is refused
//! with -32602 naming the budget and the JSON path; the server keeps answering `/healthz` during
//! and after; a contract stored before the budgets existed answers an error when used, on this
//! server and on the next one started over the same database.

use crate::ops_support;

use std::time::Duration;

use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Map, Value, json};
use svc_tests::TestApp;
use svc_tests::live::LiveClient;

use ops_support::Client;

svc_tests::on_every_backend!(svc_tests::Auth::DevAllowAll =>
    a_12500_hop_ref_chain_is_refused_at_handshake,
    a_ref_chain_within_the_size_budget_is_refused_by_ref_depth,
    a_doubling_contract_is_refused_and_health_answers_during_two_attacks,
    props_that_double_the_work_at_every_level_are_refused_unvalidated,
    tsx_nested_2000_deep_is_refused_by_register_blueprint,
    nested_raw_value_markers_are_a_parse_error_not_a_stack_overflow,
    a_stored_contract_over_budget_answers_errors_and_survives_a_restart
);

/// `$defs` d0..d{n-1}, each a `$ref` to the one before (the issue's first attack at 12,500).
fn ref_chain(n: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({ "type": "string" }));
    for i in 1..n {
        defs.insert(format!("d{i}"), json!({ "$ref": format!("#/$defs/d{}", i - 1) }));
    }
    json!({ "type": "object", "properties": { "x": { "$ref": format!("#/$defs/d{}", n - 1) } }, "$defs": defs })
}

/// Level i is `allOf` of two `$ref`s to level i-1, 41 levels: about 2^40 steps per value
/// (the issue's third attack, 2.9 KB).
fn doubling(levels: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("l0".into(), json!({ "type": "string" }));
    for i in 1..levels {
        let below = format!("#/$defs/l{}", i - 1);
        defs.insert(
            format!("l{i}"),
            json!({ "allOf": [{ "$ref": below }, { "$ref": below }] }),
        );
    }
    json!({ "type": "object", "properties": { "x": { "$ref": format!("#/$defs/l{}", levels - 1) } }, "$defs": defs })
}

async fn handshake(app: &TestApp, contract: Value) -> Value {
    app.call(
        "svc_handshake",
        json!({ "intent": "hostile", "blueprintDraft": { "contract": contract } }),
    )
    .await
}

/// Asserts a -32602 over `budget` at `path` (a prefix of the JSON Pointer).
fn assert_over_budget(body: &Value, field: &str, budget: &str, path: &str) {
    let error = &body["error"];
    assert_eq!(error["code"], -32602, "{body}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "Invalid params: {field}: over the `{budget}` budget at {path}"
        )),
        "{message}"
    );
    assert_eq!(error["data"]["code"], "over_budget", "{body}");
    assert_eq!(error["data"]["budget"], budget, "{body}");
    let data_path = error["data"]["path"].as_str().unwrap();
    assert!(data_path.starts_with(path.trim_end_matches('/')), "{body}");
}

async fn healthy(app: &TestApp) {
    let resp = app
        .client
        .get(format!("{}/healthz", app.base))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .expect("/healthz answers within a second");
    assert!(resp.status().is_success(), "{}", resp.status());
}

/// serde_json's raw-value marker (`{"$serde_json::private::RawValue": "<json text>"}`) nested in
/// its own string, each text 120 deep: parsed into a `Value`, each level is read by a reader with
/// a recursion limit of its own, and a 3.4 KiB body of 8 levels overflowed a worker's stack and
/// aborted the server. Refused as a parse error before anything is parsed, on `/mcp` and `/ops`.
async fn nested_raw_value_markers_are_a_parse_error_not_a_stack_overflow(app: TestApp) {
    let text = svc_tests::nested_raw_value_markers(10);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"svc_consume","arguments":{{"sessionId":{text}}}}}}}"#
    );
    assert!(body.len() < 16 * 1024, "{}", body.len());
    let (_, _, answer) = app.post_raw(Some("any"), body.clone()).await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the member name `$serde_json::private::RawValue` is reserved"),
        "{answer}"
    );
    let ops = app
        .client
        .post(format!("{}/ops", app.base))
        .header("content-type", "application/json")
        .bearer_auth("any")
        .body(body)
        .send()
        .await
        .expect("/ops answers");
    let ops: Value = ops.json().await.unwrap();
    assert_eq!(ops["error"]["code"], -32700, "{ops}");
    healthy(&app).await;
}

async fn a_12500_hop_ref_chain_is_refused_at_handshake(app: TestApp) {
    let chain = ref_chain(12_500);
    assert!(chain.to_string().len() > 400_000, "the issue's 450 KB contract");
    let body = handshake(&app, json!({ "propsSpec": chain.clone() })).await;
    assert_over_budget(&body, "blueprintDraft.contract", "contract_bytes", "/");
    // The same chain as an action's or a stream's schema.
    for contract in [
        json!({ "actionSpec": { "approve": { "schema": chain.clone() } } }),
        json!({ "streamSpec": { "log": { "schema": chain } } }),
    ] {
        let body = handshake(&app, contract).await;
        assert_over_budget(&body, "blueprintDraft.contract", "contract_bytes", "/");
    }
    healthy(&app).await;
}

async fn a_ref_chain_within_the_size_budget_is_refused_by_ref_depth(app: TestApp) {
    let body = handshake(&app, json!({ "propsSpec": ref_chain(2_000) })).await;
    assert_over_budget(&body, "blueprintDraft.contract", "ref_depth", "/propsSpec/");
    let body = handshake(
        &app,
        json!({ "actionSpec": { "approve": { "schema": ref_chain(40) } } }),
    )
    .await;
    assert_over_budget(
        &body,
        "blueprintDraft.contract",
        "ref_depth",
        "/actionSpec/approve/schema/$defs/d",
    );
    // A recursive schema that descends into the value stays allowed.
    let tree = json!({
        "type": "object",
        "$defs": { "node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
        "properties": { "root": { "$ref": "#/$defs/node" } }
    });
    let rendered = app
        .render(
            "tree",
            json!({ "propsSpec": tree }),
            json!({ "root": { "children": [{ "children": [] }] } }),
        )
        .await;
    assert!(rendered["sessionId"].is_string(), "{rendered}");
}

async fn a_doubling_contract_is_refused_and_health_answers_during_two_attacks(app: TestApp) {
    let contract = json!({ "propsSpec": doubling(41) });
    assert!(contract.to_string().len() < 3_200, "the issue's 2.9 KB contract");
    let attacks = async { tokio::join!(handshake(&app, contract.clone()), handshake(&app, contract.clone())) };
    let probes = async {
        for _ in 0..5 {
            healthy(&app).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let ((one, two), ()) = tokio::join!(attacks, probes);
    for body in [one, two] {
        assert_over_budget(
            &body,
            "blueprintDraft.contract",
            "schema_expansion",
            "/propsSpec/$defs/l8",
        );
    }
    healthy(&app).await;
}

/// Within every schema budget, but each level of the value doubles the work: each `allOf` branch
/// steps into member `a` and `$ref`s the schema again, so 40 levels of props mean 2^40 steps.
async fn props_that_double_the_work_at_every_level_are_refused_unvalidated(app: TestApp) {
    let contract = json!({ "propsSpec": {
        "type": "object",
        "properties": { "tree": { "$ref": "#/$defs/n" } },
        "$defs": { "n": { "allOf": [
            { "properties": { "a": { "$ref": "#/$defs/n" } } },
            { "properties": { "a": { "$ref": "#/$defs/n" } } } ] } }
    } });
    let deep = (0..40).fold(json!(1), |inner, _| json!({ "a": inner }));
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "doubling props", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let render = || {
        app.call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "tree": deep.clone() } }),
        )
    };
    let probes = async {
        for _ in 0..5 {
            healthy(&app).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let ((one, two), ()) = tokio::join!(async { tokio::join!(render(), render()) }, probes);
    for body in [one, two] {
        assert_eq!(body["result"]["isError"], true, "{body}");
        let error = &body["result"]["structuredContent"]["error"];
        assert_eq!(error["code"], "contract_violation", "{body}");
        let violation = &error["violations"][0];
        assert!(
            violation["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("not validated: over the `validation_work` budget at /tree/a/a/a"),
            "{body}"
        );
    }
    // Shallow props on the same contract render.
    let shallow = (0..5).fold(json!(1), |inner, _| json!({ "a": inner }));
    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "tree": shallow } }),
        )
        .await;
    assert!(rendered["sessionId"].is_string(), "{rendered}");
}

async fn tsx_nested_2000_deep_is_refused_by_register_blueprint(app: TestApp) {
    let ops = Client::of(&app);
    let deep = format!(
        "export default function Card() {{ return {}1{}; }}",
        "(".repeat(2_000),
        ")".repeat(2_000)
    );
    assert!(deep.len() > 4_000, "the issue's 4 KB component");
    let message = ops
        .invalid(
            "svc_ops_register_blueprint",
            json!({ "contract": {}, "componentCode": deep }),
            "componentCode",
        )
        .await;
    assert!(
        message.contains("over the `component_nesting` budget at line 1"),
        "{message}"
    );
    let huge = format!(
        "export default function Card() {{ return null; }}\n//{}",
        "x".repeat(70_000)
    );
    let message = ops
        .invalid(
            "svc_ops_register_blueprint",
            json!({ "contract": {}, "componentCode": huge }),
            "componentCode",
        )
        .await;
    assert!(message.contains("over the `component_bytes` budget"), "{message}");
    let message = ops
        .invalid(
            "svc_ops_register_blueprint",
            json!({ "contract": { "propsSpec": doubling(41) }, "componentCode": "export default function Card() { return null; }" }),
            "contract",
        )
        .await;
    assert!(
        message.contains("over the `schema_expansion` budget at /propsSpec/$defs/l8"),
        "{message}"
    );
    healthy(&app).await;
    // Ordinary code still registers.
    ops.ok(
        "svc_ops_register_blueprint",
        json!({ "contract": {}, "componentCode": "export default function Card() { return <p>{((1 + 2))}</p>; }" }),
    )
    .await;
}

/// Replaces a session's stored contract, as if it had been stored before the budgets existed.
async fn store_contract(database_url: &str, session_id: &str, contract: &Value) {
    let db = Database::connect(database_url).await.expect("connect");
    let backend = db.get_database_backend();
    let text = contract.to_string().replace('\'', "''");
    let sql = format!("UPDATE sessions SET contract = '{text}' WHERE session_id = '{session_id}'");
    let done = db
        .execute_raw(Statement::from_string(backend, sql))
        .await
        .expect("update");
    assert_eq!(done.rows_affected(), 1);
    let _ = db.close().await;
}

fn poisoned_contract() -> Value {
    json!({
        "propsSpec": doubling(41),
        "actionSpec": { "approve": { "schema": ref_chain(12_500) } },
        "streamSpec": { "log": { "mode": "append", "schema": ref_chain(12_500) } }
    })
}

/// An action, an emit and two concurrent updates on the poisoned session: each answers an error
/// naming the budget, and `/healthz` answers throughout.
async fn poisoned_session_answers_errors(base: &str, app: &TestApp, session: &str, ws_token: &Value) {
    let mut ws = LiveClient::connect(base).await;
    ws.send("subscribe", json!({ "sessionId": session, "wsToken": ws_token }))
        .await;
    ws.expect("ack").await;
    ws.send(
        "action",
        json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "approve", "data": { "x": "a" } }, "clientSeq": 1 }),
    )
    .await;
    let refused = ws.expect("error").await;
    assert_eq!(refused["code"], "CONTRACT_VIOLATION", "{refused}");
    let why = refused["violations"][0]["message"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("the contract's schema is refused: over the `schema_nodes` budget"),
        "{refused}"
    );

    let call = |tool: &'static str, arguments: Value| {
        let (client, url) = (app.client.clone(), format!("{base}/mcp"));
        let bearer = app.bearer.clone();
        async move {
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
            let resp = client
                .post(url)
                .bearer_auth(bearer)
                .header("accept", "application/json, text/event-stream")
                .json(&body)
                .send()
                .await
                .expect("request");
            resp.json::<Value>().await.expect("JSON")
        }
    };
    let emitted = call(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "line" }),
    )
    .await;
    assert_eq!(emitted["result"]["isError"], true, "{emitted}");
    let error = &emitted["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "contract_violation", "{emitted}");
    assert!(
        error["violations"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("over the `schema_nodes` budget"),
        "{emitted}"
    );

    let update = json!({ "sessionId": session, "kind": "replace", "props": { "x": "a" } });
    let probes = async {
        for _ in 0..5 {
            let resp = app
                .client
                .get(format!("{base}/healthz"))
                .timeout(Duration::from_secs(1))
                .send()
                .await
                .expect("/healthz answers within a second");
            assert!(resp.status().is_success());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let ((one, two), ()) = tokio::join!(
        async { tokio::join!(call("svc_update", update.clone()), call("svc_update", update.clone())) },
        probes
    );
    for updated in [one, two] {
        assert_eq!(updated["result"]["isError"], true, "{updated}");
        let message = updated["result"]["structuredContent"]["error"]["violations"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("over the `schema_expansion` budget at /$defs/l8"),
            "{updated}"
        );
    }
}

async fn a_stored_contract_over_budget_answers_errors_and_survives_a_restart(mut app: TestApp) {
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "x": { "type": "string" } } },
        "actionSpec": { "approve": { "schema": { "type": "object" } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "poisoned later", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "x": "a" } }),
        )
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    let session = slice["sessionId"].as_str().expect("a session").to_owned();
    store_contract(&app.settings.database_url(), &session, &poisoned_contract()).await;

    let base = app.base.clone();
    poisoned_session_answers_errors(&base, &app, &session, &slice["wsToken"]).await;

    // A restart: this server stops, another starts over the same database.
    app.stop_server();
    // On SQLite the next server must open this server's file, not one in a new data directory.
    app.settings.server.database_url = app.settings.database_url();
    let next = app.replica().await;
    poisoned_session_answers_errors(&next.base, &app, &session, &slice["wsToken"]).await;
}
