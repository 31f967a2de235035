//! The blueprints domain of `/ops`: generate (built-in generator), register, list with
//! AND-composed filters (persona and intent keywords by meaning), update (operator default,
//! variance merge), delete (idempotent), every error code, and cross-tenant probes. On SQLite
//! and PostgreSQL.

use crate::ops_support;

use ops_support::{Client, Tenants, assert_time};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    the_builtin_generator_generates_a_compiled_blueprint,
    an_unknown_generator_slug_is_generator_not_found,
    register_stores_the_component_as_given,
    arguments_are_checked_before_anything_runs,
    persona_and_intent_keywords_match_by_meaning,
    delete_is_idempotent,
    generated_blueprints_are_the_app_of_the_key,
    the_operator_default_serves_a_handshake_without_an_exact_match,
    a_blueprint_deleted_after_the_handshake_is_generated_under_a_new_id,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    update_sets_the_operator_default_and_merges_variance,
    list_filters_and_compose,
);

with_tenants!(another_tenants_blueprints_behave_like_missing_ones);

fn contract(title_field: &str) -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": { title_field: { "type": "string" } },
            "required": [title_field]
        },
        "actionSpec": { "refresh": { "schema": { "type": "object" } } },
    })
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

async fn register(ops: &Client, contract: Value, extra: Value) -> String {
    let mut arguments = json!({ "contract": contract, "componentCode": "export default () => null;" });
    arguments
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ops.ok("svc_ops_register_blueprint", arguments).await["blueprintId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Every row the filters match, page after page (`nextCursor`).
async fn listed(ops: &Client, filters: Value) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut arguments = filters;
    loop {
        let page = ops.ok("svc_ops_list_blueprints", arguments.clone()).await;
        rows.extend(page["blueprints"].as_array().unwrap().iter().cloned());
        match page.get("nextCursor") {
            Some(cursor) => arguments["cursor"] = cursor.clone(),
            None => return rows,
        }
    }
}

fn ids(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|r| r["blueprintId"].as_str().unwrap()).collect()
}

async fn the_builtin_generator_generates_a_compiled_blueprint(app: TestApp) {
    let ops = Client::of(&app);
    let generated = ops
        .ok(
            "svc_ops_generate_blueprint",
            json!({
                "contract": contract("title"),
                "persona": "  Support Lead ",
                "aesthetic": "calm",
                "context": "ticket triage card",
            }),
        )
        .await;
    let id = generated["blueprintId"].as_str().expect("an id");
    assert_eq!(generated["source"]["kind"], "llm", "{generated}");
    assert_eq!(generated["source"]["generator"], "builtin");
    assert!(
        generated["source"]["model"].as_str().is_some_and(|m| !m.is_empty()),
        "the built-in generator names its model: {generated}"
    );
    assert!(
        generated.get("validatorScore").is_none(),
        "only the advanced generator scores"
    );
    let code_hash = generated["codeHash"].as_str().unwrap();
    assert!(code_hash.len() == 64 && code_hash.chars().all(|c| c.is_ascii_hexdigit()));

    let rows = listed(&ops, json!({})).await;
    assert_eq!(ids(&rows), [id]);
    let row = &rows[0];
    assert_eq!(row["persona"], "support lead", "normalised: {row}");
    assert_eq!(row["aesthetic"], "calm");
    assert_eq!(row["description"], "ticket triage card");
    assert_eq!(row["codeHash"], code_hash);
    assert_eq!(row["isOperatorDefault"], false);
    assert_eq!(row["source"], generated["source"]);
    assert_time(&row["createdAt"]);
    assert_time(&row["updatedAt"]);

    // The contract hash is the one the agent's handshake computes for the same contract.
    let handshake = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "anything", "blueprintDraft": { "contract": contract("title") } }),
        )
        .await;
    assert_eq!(
        row["contractHash"], handshake["suggestion"]["blueprintMeta"]["contractHash"],
        "{handshake}"
    );
}

async fn an_unknown_generator_slug_is_generator_not_found(app: TestApp) {
    let ops = Client::of(&app);
    let error = ops
        .refused(
            "svc_ops_generate_blueprint",
            json!({ "contract": contract("title"), "generator": "deluxe" }),
            "generator_not_found",
        )
        .await;
    assert!(error["message"].as_str().unwrap().contains("deluxe"), "{error}");
    assert!(listed(&ops, json!({})).await.is_empty(), "nothing stored");
}

async fn register_stores_the_component_as_given(app: TestApp) {
    let ops = Client::of(&app);
    // Not even TSX: register neither generates nor validates.
    let code = "this is not a component {";
    let registered = ops
        .ok(
            "svc_ops_register_blueprint",
            json!({ "contract": { "anything": true }, "componentCode": code, "setAsOperatorDefault": true }),
        )
        .await;
    assert_eq!(registered["source"], json!({ "kind": "user" }));
    assert_eq!(
        registered["codeHash"],
        sha256_hex(code),
        "no module: the hash of the code as given"
    );
    let rows = listed(&ops, json!({})).await;
    assert_eq!(ids(&rows), [registered["blueprintId"].as_str().unwrap()]);
    assert_eq!(rows[0]["isOperatorDefault"], true);
    assert_eq!(rows[0]["source"], json!({ "kind": "user" }));

    // A component that compiles is stored with its module, content-addressed like generated ones.
    let tsx = "export default function Card() { return <p>hi</p>; }";
    let register_tsx = || {
        ops.ok(
            "svc_ops_register_blueprint",
            json!({ "contract": {}, "componentCode": tsx, "generator": "builtin" }),
        )
    };
    let (one, two) = (register_tsx().await, register_tsx().await);
    assert_ne!(one["codeHash"], sha256_hex(tsx), "the hash of the compiled module");
    assert_eq!(one["codeHash"], two["codeHash"], "the same module, the same hash");
    assert_ne!(one["blueprintId"], two["blueprintId"]);
    let registered_rows = listed(&ops, json!({ "generator": "user" })).await;
    assert_eq!(
        registered_rows.len(),
        3,
        "registered rows are `user` whatever generator was named"
    );
    assert!(listed(&ops, json!({ "generator": "builtin" })).await.is_empty());
}

async fn arguments_are_checked_before_anything_runs(app: TestApp) {
    let ops = Client::of(&app);
    let message = ops
        .invalid(
            "svc_ops_register_blueprint",
            json!({ "componentCode": "x" }),
            "arguments",
        )
        .await;
    assert!(message.contains("\"contract\" is a required property"), "{message}");
    ops.invalid(
        "svc_ops_register_blueprint",
        json!({ "contract": {}, "componentCode": "" }),
        "componentCode",
    )
    .await;
    ops.invalid(
        "svc_ops_generate_blueprint",
        json!({ "contract": "a string" }),
        "contract",
    )
    .await;
    // A contract that cannot be agreed is named with the negotiation's findings.
    let message = ops
        .invalid(
            "svc_ops_generate_blueprint",
            json!({ "contract": { "propsSpec": { "type": "object", "properties": { "x": { "type": "no-such-type" } } } } }),
            "contract",
        )
        .await;
    assert!(message.contains("propsSpec"), "{message}");
    let id = register(&ops, contract("title"), json!({})).await;
    ops.invalid(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": id, "isOperatorDefault": false }),
        "isOperatorDefault",
    )
    .await;
    for tool in ["svc_ops_update_blueprint", "svc_ops_delete_blueprint"] {
        let message = ops.invalid(tool, json!({}), "arguments").await;
        assert!(message.contains("\"blueprintId\" is a required property"), "{message}");
    }
    ops.invalid(
        "svc_ops_list_blueprints",
        json!({ "intentKeywords": "not a list" }),
        "intentKeywords",
    )
    .await;
}

async fn list_filters_and_compose(app: TestApp) {
    let ops = Client::of(&app);
    let a_user = register(&ops, contract("title"), json!({})).await;
    let b_user = register(&ops, contract("name"), json!({})).await;
    let a_builtin = ops
        .ok("svc_ops_generate_blueprint", json!({ "contract": contract("title") }))
        .await["blueprintId"]
        .as_str()
        .unwrap()
        .to_owned();
    let rows = listed(&ops, json!({})).await;
    assert_eq!(ids(&rows), [&a_user, &b_user, &a_builtin], "oldest first");
    let hash_a = rows[0]["contractHash"].clone();
    assert_eq!(rows[2]["contractHash"], hash_a, "same contract, same hash");
    assert_ne!(rows[1]["contractHash"], hash_a);

    assert_eq!(
        ids(&listed(&ops, json!({ "contractHash": hash_a })).await),
        [&a_user, &a_builtin]
    );
    assert_eq!(
        ids(&listed(&ops, json!({ "generator": "builtin" })).await),
        [&a_builtin]
    );
    assert_eq!(
        ids(&listed(&ops, json!({ "contractHash": hash_a, "generator": "user" })).await),
        [&a_user],
        "filters AND-compose"
    );
    assert!(
        listed(
            &ops,
            json!({ "contractHash": rows[1]["contractHash"], "generator": "builtin" })
        )
        .await
        .is_empty()
    );
}

async fn persona_and_intent_keywords_match_by_meaning(app: TestApp) {
    let ops = Client::of(&app);
    let revenue = register(
        &ops,
        contract("title"),
        json!({ "persona": "Finance Analyst", "context": "quarterly revenue dashboard for the sales team" }),
    )
    .await;
    let trails = register(
        &ops,
        contract("title"),
        json!({ "persona": "weekend hiker", "context": "hiking trail map with elevation profile" }),
    )
    .await;
    let _no_persona = register(&ops, contract("title"), json!({ "context": "sales revenue table" })).await;

    assert_eq!(
        ids(&listed(&ops, json!({ "persona": "  FINANCE analyst " })).await),
        [&revenue],
        "the same persona, normalised"
    );
    assert_eq!(
        ids(&listed(&ops, json!({ "persona": "finance analysts" })).await),
        [&revenue],
        "a near spelling of the persona"
    );
    assert!(
        listed(&ops, json!({ "persona": "kindergarten teacher" }))
            .await
            .is_empty(),
        "an unrelated persona matches nothing"
    );
    assert_eq!(
        ids(&listed(&ops, json!({ "intentKeywords": ["hiking", "elevation"] })).await),
        [&trails]
    );
    let revenue_rows = listed(&ops, json!({ "intentKeywords": ["revenue", "sales"] })).await;
    assert!(ids(&revenue_rows).contains(&revenue.as_str()), "{revenue_rows:?}");
    assert!(!ids(&revenue_rows).contains(&trails.as_str()), "{revenue_rows:?}");
    assert_eq!(
        ids(&listed(
            &ops,
            json!({ "intentKeywords": ["revenue", "sales"], "persona": "finance analyst" })
        )
        .await),
        [&revenue],
        "semantic filters AND-compose too"
    );
}

async fn update_sets_the_operator_default_and_merges_variance(app: TestApp) {
    let ops = Client::of(&app);
    let first = register(&ops, contract("title"), json!({ "setAsOperatorDefault": true })).await;
    let second = register(&ops, contract("title"), json!({})).await;
    let other_contract = register(&ops, contract("name"), json!({ "setAsOperatorDefault": true })).await;

    let updated = ops
        .ok(
            "svc_ops_update_blueprint",
            json!({ "blueprintId": second, "isOperatorDefault": true }),
        )
        .await;
    assert_eq!(updated["blueprintId"], second.as_str());
    assert_time(&updated["updatedAt"]);
    let defaults: Vec<(String, bool)> = listed(&ops, json!({}))
        .await
        .iter()
        .map(|r| {
            (
                r["blueprintId"].as_str().unwrap().to_owned(),
                r["isOperatorDefault"] == true,
            )
        })
        .collect();
    assert_eq!(
        defaults,
        [
            (first.clone(), false),
            (second.clone(), true),
            (other_contract.clone(), true)
        ],
        "one operator default per contract"
    );

    let before = listed(&ops, json!({})).await[1]["variantKey"].clone();
    ops.ok(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": second, "variance": { "density": "compact", "tone": "formal" } }),
    )
    .await;
    ops.ok(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": second, "variance": { "tone": "", "layout": "grid" } }),
    )
    .await;
    let row = listed(&ops, json!({})).await[1].clone();
    assert_eq!(
        row["variance"],
        json!({ "density": "compact", "layout": "grid" }),
        "{row}"
    );
    assert_ne!(row["variantKey"], before, "the variance is part of the reuse key");
    assert!(row["updatedAt"].as_str().unwrap() >= updated["updatedAt"].as_str().unwrap());

    let missing = ops
        .refused(
            "svc_ops_update_blueprint",
            json!({ "blueprintId": "no-such-blueprint", "isOperatorDefault": true }),
            "blueprint_not_found",
        )
        .await;
    assert!(missing["message"].as_str().unwrap().contains("no-such-blueprint"));
}

async fn delete_is_idempotent(app: TestApp) {
    let ops = Client::of(&app);
    let kept = register(&ops, contract("title"), json!({})).await;
    let gone = register(&ops, contract("title"), json!({})).await;
    for _ in 0..2 {
        assert_eq!(
            ops.ok("svc_ops_delete_blueprint", json!({ "blueprintId": gone })).await,
            json!({ "deleted": true })
        );
    }
    assert_eq!(
        ops.ok("svc_ops_delete_blueprint", json!({ "blueprintId": "never-existed" }))
            .await,
        json!({ "deleted": true })
    );
    assert_eq!(ids(&listed(&ops, json!({})).await), [&kept]);
    ops.refused(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": gone, "isOperatorDefault": true }),
        "blueprint_not_found",
    )
    .await;
}

async fn generated_blueprints_are_the_app_of_the_key(app: TestApp) {
    let ops = Client::of(&app);
    let other_app = ops.ok("svc_ops_create_app", json!({ "displayName": "Side" })).await["appId"].clone();
    let issued = ops
        .ok("svc_ops_issue_connector_key", json!({ "appId": other_app }))
        .await;
    let locked = Client::with_bearer(&app, issued["plaintextKey"].as_str().unwrap());
    let on_side = register(&locked, contract("title"), json!({})).await;
    assert_eq!(ids(&listed(&locked, json!({})).await), [&on_side]);
    assert!(
        listed(&ops, json!({})).await.is_empty(),
        "the default app does not see the side app's blueprints"
    );
}

async fn another_tenants_blueprints_behave_like_missing_ones(t: Tenants) {
    let mine = register(&t.owner, contract("title"), json!({ "persona": "analyst" })).await;
    let hash = listed(&t.owner, json!({})).await[0]["contractHash"].clone();

    assert!(listed(&t.other, json!({})).await.is_empty());
    assert!(listed(&t.other, json!({ "contractHash": hash })).await.is_empty());
    assert!(listed(&t.other, json!({ "persona": "analyst" })).await.is_empty());
    t.other
        .refused(
            "svc_ops_update_blueprint",
            json!({ "blueprintId": mine, "variance": { "tone": "loud" } }),
            "blueprint_not_found",
        )
        .await;
    assert_eq!(
        t.other
            .ok("svc_ops_delete_blueprint", json!({ "blueprintId": mine }))
            .await,
        json!({ "deleted": true })
    );
    let rows = listed(&t.owner, json!({})).await;
    assert_eq!(ids(&rows), [&mine], "the owner's blueprint is untouched");
    assert_eq!(rows[0]["variance"], json!({}));
}

/// Generation with a language-model generator and no provider key: `missing_credentials`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_generator_without_a_key_is_missing_credentials() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(app) = TestApp::spawn_configured("ops_bp_no_key", backend, Auth::Strict, |s| {
            for provider in s.generation.providers.values_mut() {
                provider.api_key = String::new();
                provider.api_key_env = "SVC_TEST_NO_SUCH_KEY_VARIABLE".into();
                provider.key_required = Some(true);
            }
            s.generation.default_model = "openai:gpt-4o".into();
        })
        .await
        else {
            continue;
        };
        let ops = Client::of(&app);
        let (status, _) = ops.ops("ping", json!({})).await;
        assert_eq!(status, StatusCode::OK);
        ops.refused(
            "svc_ops_generate_blueprint",
            json!({ "contract": contract("title"), "generator": "standard" }),
            "missing_credentials",
        )
        .await;
        assert!(listed(&ops, json!({})).await.is_empty());
    }
}

/// Registers `code` for `contract("title")` as the operator default; its id.
async fn operator_default(ops: &Client, code: &str) -> String {
    let registered = ops
        .ok(
            "svc_ops_register_blueprint",
            json!({ "contract": contract("title"), "componentCode": code, "setAsOperatorDefault": true }),
        )
        .await;
    registered["blueprintId"].as_str().unwrap().to_owned()
}

async fn the_operator_default_serves_a_handshake_without_an_exact_match(app: TestApp) {
    let ops = Client::of(&app);
    let broken = operator_default(&ops, "export default function Card( {").await;
    let handshake = |intent: &'static str| {
        app.tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": contract("title") } }),
        )
    };
    let first = handshake("show the weekly title").await;
    assert_eq!(
        first["suggestion"]["origin"], "agent",
        "a default that does not compile is never offered: {first}"
    );
    assert_ne!(first["suggestion"]["blueprintMeta"]["blueprintId"], broken.as_str());

    let tsx =
        "export default function Card(props: { title: string }) { return <h1 className=\"title\">{props.title}</h1>; }";
    let chosen = operator_default(&ops, tsx).await;
    let hs = handshake("show the monthly title").await;
    assert_eq!(hs["suggestion"]["origin"], "cache", "{hs}");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], chosen.as_str());
    // The default serves whatever the variance of the request or of the default.
    ops.ok(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": chosen, "variance": { "density": "compact" } }),
    )
    .await;
    let varied = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "show a roomy title", "blueprintDraft": { "contract": contract("title"), "variance": { "density": "roomy" } } }),
        )
        .await;
    assert_eq!(
        varied["suggestion"]["blueprintMeta"]["blueprintId"],
        chosen.as_str(),
        "{varied}"
    );
    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "March" } }),
        )
        .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    assert_eq!(rendered["blueprintId"], chosen.as_str());
    assert_eq!(rendered["cache"]["hit"], true);
    assert_eq!(rendered["cache"]["kind"], "operator_default", "{rendered}");
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": rendered["sessionId"] }))
        .await;
    assert_eq!(
        source["blueprint"]["source"], tsx,
        "the operator's own component is served"
    );

    // Another contract is not served by this default.
    let other = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "show the monthly name", "blueprintDraft": { "contract": contract("name") } }),
        )
        .await;
    assert_eq!(other["suggestion"]["origin"], "agent", "{other}");
}

/// Operator generations share the render queue: saturated, they answer 503, `Retry-After` and
/// -32014 like `svc_render`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saturated_queue_refuses_operator_generations_with_503() {
    let app = TestApp::spawn_configured("ops_bp_queue", Backend::Sqlite, Auth::Strict, |s| {
        s.generation.concurrency = 1;
        s.generation.max_waiting = 0;
    })
    .await
    .unwrap();
    let ops = Client::of(&app);
    // Whether 40 requests overlap depends on scheduling (a built-in generation takes a few
    // milliseconds); on a busy machine a round may pass without one, so try up to 20 rounds.
    for _round in 0..20 {
        let attempts = (0..40).map(|i| {
            let ops = ops.clone();
            async move {
                let arguments = json!({ "contract": contract(&format!("field{i}")) });
                ops.post(
                    "/ops",
                    "tools/call",
                    json!({ "name": "svc_ops_generate_blueprint", "arguments": arguments }),
                )
                .await
            }
        });
        let results = futures_util::future::join_all(attempts).await;
        for (status, _, body) in &results {
            assert!(
                *status == StatusCode::OK || *status == StatusCode::SERVICE_UNAVAILABLE,
                "{status}: {body}"
            );
        }
        if let Some((_, headers, body)) = results.iter().find(|(s, _, _)| *s == StatusCode::SERVICE_UNAVAILABLE) {
            assert_eq!(body["error"]["code"], -32014, "{body}");
            let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
            assert!(retry_after >= 1);
            assert_eq!(body["error"]["data"]["retryAfterSeconds"], retry_after);
            let accepted: Vec<&Value> = results
                .iter()
                .filter(|(s, _, _)| *s == StatusCode::OK)
                .map(|(_, _, body)| body)
                .collect();
            for body in &accepted {
                assert!(
                    body["result"]["structuredContent"]["blueprintId"].is_string(),
                    "an accepted generation succeeds: {body}"
                );
            }
            let stored = listed(&ops, json!({})).await;
            let missing: Vec<&Value> = accepted
                .iter()
                .map(|b| &b["result"]["structuredContent"]["blueprintId"])
                .filter(|id| !stored.iter().any(|r| &&r["blueprintId"] == id))
                .collect();
            assert!(
                missing.is_empty(),
                "every accepted generation is stored; missing {missing:?} of {}",
                accepted.len()
            );
            return;
        }
    }
    panic!("40 concurrent generations on one slot never collided in 20 rounds");
}

/// A cache suggestion whose blueprint an operator deletes before the render: the render generates
/// a new component under a new id (a blueprintId names one component) and says it was no reuse.
async fn a_blueprint_deleted_after_the_handshake_is_generated_under_a_new_id(app: TestApp) {
    let ops = Client::of(&app);
    let first = app
        .render("weekly title card", contract("title"), json!({ "title": "Week 1" }))
        .await;
    let cached = first["blueprintId"].as_str().unwrap().to_owned();
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "weekly title card", "blueprintDraft": { "contract": contract("title") } }),
        )
        .await;
    assert_eq!(hs["action"], "reuse");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], cached.as_str());
    assert_eq!(
        ops.ok("svc_ops_delete_blueprint", json!({ "blueprintId": cached }))
            .await,
        json!({ "deleted": true })
    );
    // The render made with it can no longer be mounted (Document 1's `BLUEPRINT_UNRESOLVABLE`).
    let (_, read) = app.rpc("resources/read", json!({ "uri": first["resourceUri"] })).await;
    assert_eq!(read["error"]["code"], -32006, "{read}");
    assert_eq!(read["error"]["data"]["code"], "BLUEPRINT_UNRESOLVABLE", "{read}");

    let rendered = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "Week 2" } }),
        )
        .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    let fresh = rendered["blueprintId"].as_str().unwrap().to_owned();
    assert_ne!(fresh, cached, "a new component takes a new id");
    assert_eq!(
        rendered["action"], "create",
        "nothing is cached for the intent any more"
    );
    assert_eq!(rendered["cache"]["hit"], false);
    assert_eq!(rendered["cache"]["llmCallsAvoided"], 0);
    assert!(rendered["cache"].get("cachedBlueprintId").is_none(), "{rendered}");
    assert!(rendered["cache"]["reason"].as_str().unwrap().contains("deleted"));
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": rendered["sessionId"] }))
        .await;
    assert!(
        source["blueprint"]["source"]
            .as_str()
            .unwrap()
            .contains("export default")
    );
    assert_eq!(
        ids(&listed(&ops, json!({})).await),
        [&fresh],
        "the old id stays deleted"
    );

    // The new component is what the cache serves from now on.
    let again = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "weekly title card", "blueprintDraft": { "contract": contract("title") } }),
        )
        .await;
    assert_eq!(again["suggestion"]["blueprintMeta"]["blueprintId"], fresh.as_str());
}
