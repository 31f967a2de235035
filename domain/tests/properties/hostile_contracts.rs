//! Properties of untrusted contracts, fuzz-style on stable: for generated schemas (applicators,
//! `$ref`s into `$defs` including cycles, nesting) and generated values, negotiation, the budget
//! checks, compilation and validation always return, never panic or overflow the stack, and a
//! schema the budgets accept never needs more validation work than `validation_work` allows
//! (an over-budget value answers one `validation_work` violation instead of being validated).

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use svc_domain::budget::Budget;
use svc_domain::contract::{check_contract_budgets, compile_schema, negotiate};

const DEFS: usize = 6;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({ "type": "string" })),
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({ "type": "integer", "minimum": 0 })),
        Just(json!({ "pattern": "^a+$" })),
        Just(json!({ "$ref": "#" })),
        Just(json!({ "$ref": "#/$defs/missing" })),
        Just(json!({ "$ref": "https://example.com/x" })),
        (0..DEFS).prop_map(|i| json!({ "$ref": format!("#/$defs/d{i}") })),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 96, 4, |inner| {
        let list = prop::collection::vec(inner.clone(), 1..4);
        prop_oneof![
            list.clone().prop_map(|v| json!({ "allOf": v })),
            list.clone().prop_map(|v| json!({ "anyOf": v })),
            list.prop_map(|v| json!({ "oneOf": v })),
            inner.clone().prop_map(|s| json!({ "not": s })),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "if": a, "then": b })),
            inner.clone().prop_map(|s| json!({ "type": "array", "items": s })),
            inner.clone().prop_map(|s| json!({ "additionalProperties": s })),
            prop::collection::vec(("[a-c]", inner), 1..3).prop_map(|members| {
                let properties: Map<String, Value> = members.into_iter().collect();
                json!({ "type": "object", "properties": properties })
            }),
        ]
    })
}

/// An object schema with `$defs` d0..d5 that may `$ref` each other in any shape.
fn props_spec() -> impl Strategy<Value = Value> {
    (schema(), prop::collection::vec(schema(), DEFS)).prop_map(|(root, defs)| {
        let defs: Map<String, Value> = defs
            .into_iter()
            .enumerate()
            .map(|(i, d)| (format!("d{i}"), d))
            .collect();
        json!({ "type": "object", "properties": { "x": root }, "$defs": defs })
    })
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        Just(json!(1)),
        Just(json!("a")),
        Just(json!("")),
        Just(json!(true))
    ];
    leaf.prop_recursive(8, 64, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-c]", inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn negotiation_compilation_and_validation_always_return(spec in props_spec(), x in value()) {
        let contract = json!({ "propsSpec": spec, "actionSpec": { "go": { "schema": spec } } });
        let within = check_contract_budgets(&contract).is_ok();
        let negotiated = negotiate(&contract);
        if negotiated.is_ok() {
            prop_assert!(within, "an agreed contract is within the budgets");
        }
        if let Ok(compiled) = compile_schema(&spec) {
            let found = compiled.violations(&json!({ "x": x }));
            let over_work = found.iter().any(|v| v.message.contains(Budget::ValidationWork.name()));
            prop_assert!(!over_work || found.len() == 1, "{found:?}");
            let _ = compiled.is_valid(&json!({ "x": x }));
        }
    }
}
