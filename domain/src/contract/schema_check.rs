//! JSON Schema (2020-12) compilation and instance validation, with findings that name the field
//! and the rule. Compiled validators are cached by the application; this module stays pure.

use serde_json::Value;

use super::budgets::{SchemaGraph, measure_schema};
use super::validation_work::{check_validation_work, check_work_within};
use crate::budget::BudgetExceeded;

/// One way an instance breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer into the instance (`/items/0/qty`); empty for the root.
    pub path: String,
    /// What rule was broken, in words.
    pub message: String,
}

/// Why a schema was not compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaCompileError {
    /// Refused before compiling: compiling or validating it could exhaust the stack or the CPU.
    #[error(transparent)]
    OverBudget(#[from] BudgetExceeded),
    /// Not a valid JSON Schema 2020-12.
    #[error("{0}")]
    Invalid(String),
}

/// A compiled schema, with the graph of its subschemas that bounds the work of each validation.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    graph: SchemaGraph,
    /// No keyword whose cost grows faster than the value it checks (see [`Self::light_violations`]).
    linear: bool,
}

/// A light validation checks a value of at most this many JSON nodes (objects, arrays, scalars)...
const LIGHT_NODES: usize = 256;
/// ...whose strings and member names add up to at most this many bytes...
const LIGHT_TEXT_BYTES: usize = 4096;
/// ...with at most this many subschema applications (the `validation_work` count).
const LIGHT_WORK: usize = 1024;

/// Compiles `schema` as JSON Schema 2020-12 with format assertions on, once it is within the
/// complexity budgets: every compile goes through here, so a stored schema from before the
/// budgets is refused as well.
pub fn compile_schema(schema: &Value) -> Result<CompiledSchema, SchemaCompileError> {
    let graph = measure_schema(schema)?;
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| SchemaCompileError::Invalid(e.to_string()))?;
    Ok(CompiledSchema {
        validator,
        graph,
        linear: !uses_regexes(schema),
    })
}

/// Whether `schema` may run a regular expression: `pattern`, `patternProperties`, or the `regex`
/// format, which compiles the checked string itself. A backtracking pattern can take time
/// exponential in a short string. Conservative: a property merely named `pattern` counts too.
fn uses_regexes(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(key, value)| {
            key == "pattern"
                || key == "patternProperties"
                || (key == "format" && value.as_str() == Some("regex"))
                || uses_regexes(value)
        }),
        Value::Array(items) => items.iter().any(uses_regexes),
        _ => false,
    }
}

/// Whether `value` has at most `nodes` JSON nodes and `text` bytes of strings and member names.
fn is_small(value: &Value, nodes: &mut usize, text: &mut usize) -> bool {
    let Some(left) = nodes.checked_sub(1) else {
        return false;
    };
    *nodes = left;
    match value {
        Value::String(s) => spend(text, s.len()),
        Value::Array(items) => items.iter().all(|item| is_small(item, nodes, text)),
        Value::Object(map) => map
            .iter()
            .all(|(key, member)| spend(text, key.len()) && is_small(member, nodes, text)),
        _ => true,
    }
}

/// Takes `bytes` off what is left of `text`; false when not that much is left.
fn spend(text: &mut usize, bytes: usize) -> bool {
    match text.checked_sub(bytes) {
        Some(left) => {
            *text = left;
            true
        }
        None => false,
    }
}

impl CompiledSchema {
    /// Every violation of `instance`, in document order; a value whose validation would be over
    /// the `validation_work` budget is not validated and answers that as its one violation.
    pub fn violations(&self, instance: &Value) -> Vec<SchemaViolation> {
        if let Err(over) = check_validation_work(&self.graph, instance) {
            return vec![SchemaViolation {
                path: over.path.clone(),
                message: format!("not validated: {over}"),
            }];
        }
        self.validator
            .iter_errors(instance)
            .map(|e| SchemaViolation {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect()
    }

    /// [`Self::violations`] when the validation is light enough to run where the caller is (an
    /// async worker) instead of through the CPU gate: no regular expression in the schema, a
    /// small value, and little work counted for it. `None` when it is not: run it on the gate.
    pub fn light_violations(&self, instance: &Value) -> Option<Vec<SchemaViolation>> {
        let (mut nodes, mut text) = (LIGHT_NODES, LIGHT_TEXT_BYTES);
        let light = self.linear
            && is_small(instance, &mut nodes, &mut text)
            && check_work_within(&self.graph, instance, LIGHT_WORK).is_ok();
        light.then(|| self.violations(instance))
    }

    /// Whether `instance` matches; a value over the `validation_work` budget does not.
    pub fn is_valid(&self, instance: &Value) -> bool {
        check_validation_work(&self.graph, instance).is_ok() && self.validator.is_valid(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_the_path_and_the_rule() {
        let v = compile_schema(&json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "type": "object",
                "properties": { "qty": { "type": "integer" } } } } }
        }))
        .unwrap();
        let found = v.violations(&json!({ "items": [{ "qty": "three" }] }));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/items/0/qty");
        assert!(found[0].message.contains("integer"), "{}", found[0].message);
    }

    #[test]
    fn formats_are_asserted() {
        let v = compile_schema(&json!({ "type": "string", "format": "date-time" })).unwrap();
        assert!(v.violations(&json!("2026-11-25T10:00:00Z")).is_empty());
        assert_eq!(v.violations(&json!("yesterday")).len(), 1);
    }

    #[test]
    fn a_small_value_of_a_schema_without_regexes_is_checked_lightly_with_the_same_findings() {
        let v = compile_schema(&json!({
            "type": "object",
            "properties": { "qty": { "type": "integer", "minimum": 1 }, "when": { "format": "date-time" } }
        }))
        .unwrap();
        for value in [json!({ "qty": 2 }), json!({ "qty": 0, "when": "yesterday" })] {
            assert_eq!(v.light_violations(&value), Some(v.violations(&value)));
        }
        assert_eq!(
            v.light_violations(&json!({ "qty": 0 })).map(|found| found.len()),
            Some(1)
        );
    }

    #[test]
    fn a_schema_with_a_regex_is_never_checked_lightly() {
        for schema in [
            json!({ "type": "string", "pattern": "^(a+)+$" }),
            json!({ "type": "object", "patternProperties": { "^x": { "type": "integer" } } }),
            json!({ "type": "object", "properties": { "re": { "type": "string", "format": "regex" } } }),
        ] {
            let v = compile_schema(&schema).unwrap();
            assert_eq!(v.light_violations(&json!("aaaa")), None, "{schema}");
            assert_eq!(v.light_violations(&json!({ "x1": 1, "re": "a" })), None, "{schema}");
        }
    }

    #[test]
    fn a_large_value_is_not_checked_lightly() {
        let v = compile_schema(&json!({ "type": "array", "items": { "type": "integer" } })).unwrap();
        let few: Vec<u32> = (0..100).collect();
        let many: Vec<u32> = (0..1000).collect();
        assert_eq!(v.light_violations(&json!(few)), Some(vec![]));
        assert_eq!(v.light_violations(&json!(many)), None);
        let long_text = "x".repeat(LIGHT_TEXT_BYTES + 1);
        let strings = compile_schema(&json!({ "type": "string" })).unwrap();
        assert_eq!(strings.light_violations(&json!("short")), Some(vec![]));
        assert_eq!(strings.light_violations(&json!(long_text)), None);
    }

    #[test]
    fn a_value_needing_much_work_is_not_checked_lightly() {
        // Every item is checked against its schema and eight branches: 200 items (within the
        // node count) pass 1,024 applications.
        let v = compile_schema(&json!({ "type": "array", "items": { "anyOf": [
            { "type": "integer" }, { "type": "string" }, { "type": "boolean" }, { "type": "null" },
            { "type": "object" }, { "type": "array" }, { "type": "number" }, { "const": 1 }
        ] } }))
        .unwrap();
        let few: Vec<u32> = (0..50).collect();
        let more: Vec<u32> = (0..200).collect();
        assert_eq!(v.light_violations(&json!(few)), Some(vec![]));
        assert_eq!(v.light_violations(&json!(more)), None);
    }

    #[test]
    fn an_invalid_schema_does_not_compile() {
        assert!(matches!(
            compile_schema(&json!({ "type": "not-a-type" })),
            Err(SchemaCompileError::Invalid(_))
        ));
    }

    #[test]
    fn a_schema_over_budget_is_not_compiled() {
        let cycle = json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" });
        assert!(matches!(compile_schema(&cycle), Err(SchemaCompileError::OverBudget(_))));
    }
}
