//! The budgets as a negotiated or stored contract meets them.

use serde_json::{Map, Value, json};

use super::{check_contract_budgets, check_schema_budgets};
use crate::budget::{Budget, BudgetExceeded};

/// `$defs` d0..d{n-1}, each a `$ref` to the one before: the first attack.
fn ref_chain(n: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({ "type": "string" }));
    for i in 1..n {
        defs.insert(format!("d{i}"), json!({ "$ref": format!("#/$defs/d{}", i - 1) }));
    }
    json!({ "type": "object", "properties": { "x": { "$ref": format!("#/$defs/d{}", n - 1) } }, "$defs": defs })
}

/// Level i is `allOf` of two `$ref`s to level i-1: the third attack.
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

fn refused(schema: &Value) -> BudgetExceeded {
    check_schema_budgets(schema).expect_err(&schema.to_string().chars().take(200).collect::<String>())
}

#[test]
fn ordinary_schemas_pass() {
    for schema in [
        json!({ "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] }),
        json!(true),
        json!({ "$defs": { "row": { "type": "object" } }, "type": "array", "items": { "$ref": "#/$defs/row" } }),
        json!({ "allOf": [{ "$ref": "#/$defs/a" }, { "required": ["b"] }], "$defs": { "a": { "type": "object" } } }),
        json!({ "$defs": { "n": { "$anchor": "node", "type": "object" } }, "$ref": "#node" }),
        json!({ "default": { "$ref": "#/nowhere" }, "const": { "$id": "x" }, "type": "object" }),
        ref_chain(32),
        doubling(8),
    ] {
        assert_eq!(check_schema_budgets(&schema), Ok(()), "{schema}");
    }
}

#[test]
fn recursion_that_descends_into_the_value_is_allowed() {
    let tree = json!({
        "$defs": { "node": { "type": "object", "properties": {
            "label": { "type": "string" },
            "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
        "$ref": "#/$defs/node"
    });
    assert_eq!(check_schema_budgets(&tree), Ok(()));
}

#[test]
fn a_long_ref_chain_is_refused_by_ref_depth() {
    // The 12,500 hops is over the node budget already; 2,000 fits it.
    assert_eq!(refused(&ref_chain(12_500)).budget, Budget::SchemaNodes);
    let e = refused(&ref_chain(2_000));
    assert_eq!(e.budget, Budget::RefDepth);
    assert_eq!(e.found, "33 hops");
    assert!(
        e.path.starts_with("/$defs/d") || e.path.starts_with("/properties/x"),
        "{e}"
    );
    assert_eq!(refused(&ref_chain(34)).budget, Budget::RefDepth);
}

#[test]
fn a_doubling_tree_of_refs_is_refused_by_schema_expansion() {
    let e = refused(&doubling(41));
    assert_eq!(e.budget, Budget::SchemaExpansion);
    // Level i applies itself, its two `allOf` entries and twice level i-1: 2^(i+2) - 3.
    assert_eq!(e.path, "/$defs/l8", "the first level over 1,000 (1,021 subschemas)");
    assert_eq!(e.found, "1021 subschemas");
}

#[test]
fn an_in_place_cycle_is_refused() {
    for schema in [
        json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }),
        json!({ "$defs": { "a": { "allOf": [{ "$ref": "#/$defs/b" }] }, "b": { "not": { "$ref": "#/$defs/a" } } } }),
        json!({ "anyOf": [{ "$ref": "#" }] }),
    ] {
        let e = refused(&schema);
        assert_eq!(e.budget, Budget::RefDepth, "{schema}");
        assert!(e.found.contains("cycle"), "{e}");
    }
}

#[test]
fn references_outside_the_document_are_refused() {
    for (schema, path) in [
        (json!({ "$ref": "https://example.com/schema" }), "/$ref"),
        (
            json!({ "properties": { "a": { "$ref": "#/$defs/missing" } } }),
            "/properties/a/$ref",
        ),
        (
            json!({ "properties": { "a": { "$dynamicRef": "#x" } } }),
            "/properties/a/$dynamicRef",
        ),
        (
            json!({ "$defs": { "a": { "$id": "other", "$ref": "#/x" } } }),
            "/$defs/a/$id",
        ),
        (json!({ "$ref": "#/default", "default": { "type": "string" } }), "/$ref"),
        // Places that hold subschemas but are none themselves, and a key with `/` unescaped.
        (json!({ "allOf": [{ "$ref": "#/allOf" }] }), "/allOf/0/$ref"),
        (
            json!({ "properties": { "a": { "$ref": "#/properties" } } }),
            "/properties/a/$ref",
        ),
        (
            json!({ "$defs": { "a/b": {} }, "properties": { "x": { "$ref": "#/$defs/a/b" } } }),
            "/properties/x/$ref",
        ),
    ] {
        let e = refused(&schema);
        assert_eq!((e.budget, e.path.as_str()), (Budget::RefScope, path), "{schema}");
    }
}

#[test]
fn references_resolve_through_escapes_and_the_root_id() {
    let schema = json!({
        "$id": "https://svc.example/props",
        "$defs": { "a/b": { "type": "string" }, "c d": { "type": "string" } },
        "properties": {
            "x": { "$ref": "#/$defs/a~1b" },
            "y": { "$ref": "#/$defs/c%20d" },
            "z": { "$ref": "https://svc.example/props#/$defs/a~1b" } }
    });
    assert_eq!(check_schema_budgets(&schema), Ok(()));
}

#[test]
fn references_resolve_to_every_kind_of_place() {
    let schema = json!({
        "$defs": { "": { "type": "string" }, "t~n": { "type": "string" } },
        "prefixItems": [{ "type": "string" }, { "$ref": "#/prefixItems/0" }],
        "allOf": [{ "type": "object" }, { "$ref": "#/allOf/0" }],
        "dependentSchemas": { "k": { "type": "object" } },
        "properties": {
            "empty": { "$ref": "#/$defs/" },
            "tilde": { "$ref": "#/$defs/t~0n" },
            "dependent": { "$ref": "#/dependentSchemas/k" },
            "root": { "$ref": "#" }
        }
    });
    assert_eq!(check_schema_budgets(&schema), Ok(()));
}

#[test]
fn size_and_nesting_are_bounded() {
    let wide = json!({ "enum": (0..10_000).collect::<Vec<_>>() });
    assert_eq!(refused(&wide).budget, Budget::SchemaNodes);
    let mut deep = json!({ "type": "string" });
    for _ in 0..40 {
        deep = json!({ "properties": { "a": deep } });
    }
    let e = refused(&deep);
    assert_eq!(e.budget, Budget::SchemaDepth);
    assert!(e.path.starts_with("/properties/a/properties/a"), "{e}");
}

#[test]
fn a_contract_names_the_schema_at_fault() {
    let contract = json!({
        "propsSpec": { "type": "object" },
        "actionSpec": { "approve": { "schema": doubling(41) } }
    });
    let e = check_contract_budgets(&contract).unwrap_err();
    assert_eq!(e.budget, Budget::SchemaExpansion);
    assert_eq!(e.path, "/actionSpec/approve/schema/$defs/l8");
    let stream = json!({ "streamSpec": { "log": { "schema": ref_chain(100) } } });
    assert!(
        check_contract_budgets(&stream)
            .unwrap_err()
            .path
            .starts_with("/streamSpec/log/schema/")
    );
}

/// An object schema of `n` string properties, each with its own `pattern`.
fn patterned(n: usize) -> Value {
    let props: Map<String, Value> = (0..n)
        .map(|i| {
            (
                format!("p{i}"),
                json!({ "type": "string", "pattern": format!("^x{i}$") }),
            )
        })
        .collect();
    json!({ "type": "object", "properties": props })
}

#[test]
fn a_contracts_patterns_are_counted_together() {
    let within = json!({
        "propsSpec": patterned(40),
        "actionSpec": { "pick": { "schema": { "type": "object", "patternProperties": (0..24).map(|i| (format!("^k{i}"), json!({}))).collect::<Map<String, Value>>() } } }
    });
    assert_eq!(check_contract_budgets(&within), Ok(()));
    let over = json!({ "propsSpec": patterned(40), "streamSpec": { "log": { "schema": patterned(25) } } });
    let e = check_contract_budgets(&over).unwrap_err();
    assert_eq!(
        (e.budget, e.path.as_str(), e.found.as_str()),
        (
            Budget::ContractPatterns,
            "/streamSpec/log/schema/properties/p24/pattern",
            "more than 64"
        )
    );
    // A stored schema compiled on its own holds at most a contract's worth.
    assert_eq!(check_schema_budgets(&patterned(64)), Ok(()));
    assert_eq!(refused(&patterned(65)).path, "/properties/p64/pattern");
    let keyed =
        json!({ "patternProperties": (0..65).map(|i| (format!("^a/{i}"), json!({}))).collect::<Map<String, Value>>() });
    assert_eq!(refused(&keyed).path, "/patternProperties/^a~164");
}

#[test]
fn a_huge_contract_is_refused_by_its_size() {
    let contract = json!({ "propsSpec": { "type": "object", "description": "x".repeat(300 * 1024) } });
    let e = check_contract_budgets(&contract).unwrap_err();
    assert_eq!((e.budget, e.path.as_str()), (Budget::ContractBytes, ""));
}
