//! The tools' output schemas in `tools/list` publish Document 1's closed sets.

use serde_json::{Value, json};
use svc_tests::{Auth, TestApp};

/// The values of a closed set as `schema` publishes them (`enum`, or `const`), following `$ref`s
/// into `root` and the branches of `anyOf` / `oneOf` / `allOf`.
fn closed_values(root: &Value, schema: &Value) -> std::collections::BTreeSet<String> {
    let mut values = std::collections::BTreeSet::new();
    for node in branches(root, schema) {
        let listed = node["enum"].as_array().cloned().unwrap_or_default();
        for value in listed.iter().chain(node.get("const")) {
            if let Some(text) = value.as_str() {
                values.insert(text.to_owned());
            }
        }
    }
    values
}

/// `schema` and every schema it is made of: its `$ref` target and its combinators' branches.
fn branches<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    let mut found = vec![schema];
    if let Some(target) = schema["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        found.extend(branches(root, root.pointer(target).expect("a $ref into the schema")));
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for branch in schema[combinator].as_array().into_iter().flatten() {
            found.extend(branches(root, branch));
        }
    }
    found
}

/// The schemas of property `name` anywhere in `schema`'s branches.
fn property<'a>(root: &'a Value, schema: &'a Value, name: &str) -> Vec<&'a Value> {
    branches(root, schema)
        .into_iter()
        .filter_map(|node| node["properties"].get(name))
        .collect()
}

fn values_at(root: &Value, path: &[&str]) -> std::collections::BTreeSet<String> {
    let mut schemas = vec![root];
    for name in path {
        schemas = schemas.into_iter().flat_map(|s| property(root, s, name)).collect();
    }
    schemas.into_iter().flat_map(|s| closed_values(root, s)).collect()
}

fn set(values: &[&str]) -> std::collections::BTreeSet<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// Document 1's closed sets are published as such in `tools/list`, so a client can check them:
/// the render's outcomes, actions, failure codes and refusal fields, and the consume status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_schemas_enumerate_the_closed_sets() {
    let app = TestApp::spawn("closed_sets", svc_tests::Backend::Sqlite, Auth::DevAllowAll)
        .await
        .unwrap();
    let listed = app.rpc("tools/list", json!({})).await.1;
    let output_schema = |name: &str| {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"))["outputSchema"]
            .clone()
    };
    let render = output_schema("svc_render");
    assert_eq!(
        values_at(&render, &["outcome"]),
        set(&["rendered", "failed", "refused"])
    );
    assert_eq!(
        values_at(&render, &["action"]),
        set(&["create", "reuse", "update", "replace", "declined"])
    );
    assert_eq!(
        values_at(&render, &["error", "code"]),
        set(&[
            "PRODUCTION_FAILED",
            "VALIDATION_ERROR",
            "NO_PLATFORM_KEY",
            "NO_CREDENTIALS",
            "GENERATION_QUEUE_OVERLOADED"
        ])
    );
    let refusal_codes = values_at(&render, &["refusal", "code"]);
    let named = set(&[
        "insufficient_credit",
        "app_rate_limited",
        "issuer_rate_limited",
        "app_deprovisioned",
    ]);
    assert!(
        refusal_codes.is_subset(&named),
        "the render gate's codes are the registry's: {refusal_codes:?}"
    );
    for raised_by_a_render in ["insufficient_credit", "app_rate_limited", "issuer_rate_limited"] {
        assert!(refusal_codes.contains(raised_by_a_render), "{refusal_codes:?}");
    }
    assert_eq!(
        values_at(&render, &["refusal", "retry"]),
        set(&["after-fix", "next-period", "later", "never"])
    );
    assert_eq!(values_at(&render, &["refusal", "handshake"]), set(&["intact"]));
    let consume = output_schema("svc_consume");
    assert_eq!(values_at(&consume, &["status"]), set(&["active", "expired"]));
}
