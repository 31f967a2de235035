//! Contracts built to make the server hold memory or answer at length (docs/budgets.md): patterns
//! that compile to megabytes each, more patterns than a contract may hold, and schemas that a tiny
//! value breaks millions of times. Each is refused or answered within bounds, exactly.

use serde_json::{Map, Value, json};
use svc_tests::TestApp;
use svc_tests::live::LiveClient;

svc_tests::on_every_backend!(svc_tests::Auth::DevAllowAll =>
    patterns_too_large_compiled_are_declined_naming_the_first,
    a_contract_of_more_than_64_patterns_is_over_its_budget,
    at_most_100_violations_are_listed_on_mcp_and_on_the_live_channel,
    a_required_list_applied_450_times_is_refused_unvalidated,
    a_value_costly_to_check_lists_its_first_violation
);

/// An object schema whose properties `p0..p{n-1}` each have a pattern made by `pattern(i)`.
fn patterned(n: usize, pattern: impl Fn(usize) -> String) -> Value {
    let props: Map<String, Value> = (0..n)
        .map(|i| (format!("p{i}"), json!({ "type": "string", "pattern": pattern(i) })))
        .collect();
    json!({ "type": "object", "properties": props })
}

/// `required` names `n0..n{count-1}`.
fn names(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("n{i}")).collect()
}

async fn patterns_too_large_compiled_are_declined_naming_the_first(app: TestApp) {
    // The audit's 1.1 KB contract: 20 patterns of 8.5 MB each compiled, 200 MB a handshake.
    let contract = json!({ "propsSpec": patterned(20, |i| format!("\\p{{L}}{{200}}<tag>{i}")) });
    let declined = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "costly patterns", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    assert_eq!(declined["action"], "declined", "{declined}");
    assert_eq!(
        declined["findings"],
        json!([{
            "code": "invalid_schema",
            "path": "/propsSpec",
            "message": "does not compile as JSON Schema 2020-12: the pattern \"\\\\p{L}{200}<tag>0\" at /properties/p0/pattern is too large: compiled, it would take more than 262144 bytes (a counted repetition of a large character class, such as `\\p{L}{200}`, is the usual cause: match the class with `+` and bound the length with `maxLength`)"
        }]),
        "{declined}"
    );
    // What the message advises is agreed.
    let advised = json!({ "propsSpec": { "type": "object", "properties": {
        "name": { "type": "string", "pattern": "^\\p{L}+$", "maxLength": 200 } } } });
    let agreed = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "letters", "blueprintDraft": { "contract": advised } }),
        )
        .await;
    assert!(agreed["handshakeId"].is_string(), "{agreed}");
}

async fn a_contract_of_more_than_64_patterns_is_over_its_budget(app: TestApp) {
    let contract = json!({
        "propsSpec": patterned(40, |i| format!("^a{i}$")),
        "streamSpec": { "log": { "mode": "append", "schema": patterned(25, |i| format!("^b{i}$")) } }
    });
    let body = app
        .call(
            "svc_handshake",
            json!({ "intent": "many patterns", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    assert_eq!(
        body["error"],
        json!({
            "code": -32602,
            "message": "Invalid params: blueprintDraft.contract: over the `contract_patterns` budget at /streamSpec/log/schema/properties/p24/pattern: a contract's schemas hold at most 64 regular expressions (`pattern` values and `patternProperties` keys) (more than 64)",
            "data": { "code": "over_budget", "budget": "contract_patterns", "limit": 64, "path": "/streamSpec/log/schema/properties/p24/pattern" }
        }),
        "{body}"
    );
}

async fn at_most_100_violations_are_listed_on_mcp_and_on_the_live_channel(app: TestApp) {
    let contract = json!({
        "propsSpec": { "type": "object", "required": names(500) },
        "actionSpec": { "fill": { "schema": { "type": "object", "required": names(500) } } }
    });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "many required", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let body = app
        .call("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": {} }))
        .await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    let error = &body["result"]["structuredContent"]["error"];
    let listed: Vec<Value> = (0..100)
        .map(|i| json!({ "path": "", "message": format!("\"n{i}\" is a required property") }))
        .collect();
    assert_eq!(error["violations"], json!(listed));
    assert_eq!(error["violationsTruncated"], true);
    assert_eq!(
        error["message"],
        "props do not match the contract: props: \"n0\" is a required property (the list stops at the first 100; there may be more)"
    );

    // Props with every name render; the card's action breaks its schema 500 times.
    let all: Map<String, Value> = names(500).into_iter().map(|n| (n, json!(1))).collect();
    let body = app
        .call("svc_render", json!({ "handshakeId": hs["handshakeId"], "props": all }))
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    let session = slice["sessionId"].as_str().expect("a session").to_owned();
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": session, "wsToken": slice["wsToken"] }),
    )
    .await;
    ws.expect("ack").await;
    ws.send(
        "action",
        json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "fill", "data": {} }, "clientSeq": 1 }),
    )
    .await;
    let refused = ws.expect("error").await;
    assert_eq!(refused["code"], "CONTRACT_VIOLATION", "{refused}");
    assert_eq!(refused["violations"], json!(listed));
    assert_eq!(refused["violationsTruncated"], true, "{refused}");
}

/// Props whose item `a/0` is checked `refs` times against a `required` list of 9,000 names.
async fn render_amplified(app: &TestApp, refs: usize) -> Value {
    let contract = json!({ "propsSpec": {
        "$defs": { "req": { "required": names(9_000) } },
        "type": "object",
        "properties": { "a": { "type": "array", "items": { "allOf": vec![json!({ "$ref": "#/$defs/req" }); refs] } } }
    } });
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": format!("amplifier {refs}"), "blueprintDraft": { "contract": contract } }),
        )
        .await;
    app.call(
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": { "a": [{}] } }),
    )
    .await
}

async fn a_required_list_applied_450_times_is_refused_unvalidated(app: TestApp) {
    // The audit's 91 KB amplifier: 11 bytes of props made 4,050,000 violations and a 12 MB answer.
    let body = render_amplified(&app, 450).await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    let error = &body["result"]["structuredContent"]["error"];
    assert_eq!(
        error["violations"],
        json!([{ "path": "/a/0", "message": "not validated: over the `validation_work` budget at /a/0: validating one value does at most 1000000 steps: a subschema applied to the value, a member or an item is one step, and one more per name in its `required` and per JSON value in its `enum` and `const` (more than 1000000 steps)" }]),
        "{body}"
    );
    assert!(error.get("violationsTruncated").is_none(), "{body}");
}

async fn a_value_costly_to_check_lists_its_first_violation(app: TestApp) {
    // Within the `validation_work` budget, yet 900,000 violations: gathered, they held 320 MB.
    let body = render_amplified(&app, 100).await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    let error = &body["result"]["structuredContent"]["error"];
    assert_eq!(
        error["violations"],
        json!([{ "path": "/a/0", "message": "\"n0\" is a required property" }]),
        "{body}"
    );
    assert_eq!(error["violationsTruncated"], true, "{body}");
    assert_eq!(
        error["message"],
        "props do not match the contract: props/a/0: \"n0\" is a required property (the list stops at the first 1; there may be more)"
    );
}
