//! Which validations are light enough to run where the request is (an async worker) instead of on
//! a blocking thread through the CPU gate. A validation's cost is the subschema applications it
//! makes times what each application does, and one application does at most what its keywords
//! say (a `required` list, an `enum`, a `const`): bounded by the whole schema's size. So a
//! validation is light when the value is small, the applications are few, their count times the
//! schema's size is small, and no regular expression runs (a backtracking pattern can take time
//! exponential in a short string, which no count sees).

use serde_json::Value;

use super::budgets::SchemaGraph;
use super::validation_work::check_work_within;
use crate::text::json_len;

/// A light validation checks a value of at most this many JSON nodes (objects, arrays, scalars)...
const LIGHT_NODES: usize = 256;
/// ...whose strings and member names add up to at most this many bytes...
const LIGHT_TEXT_BYTES: usize = 4096;
/// ...with at most this many subschema applications (the `validation_work` count)...
const LIGHT_WORK: usize = 1024;
/// ...and at most this many applications times the schema's bytes as compact JSON.
const LIGHT_COST: usize = 256 * 1024;

/// What a compiled schema's validations may cost, known when it is compiled.
#[derive(Debug)]
pub(super) struct LightBound {
    /// Some validation may run a regular expression: none is light.
    regexes: bool,
    schema_bytes: usize,
}

impl LightBound {
    pub(super) fn of(schema: &Value) -> Self {
        Self {
            regexes: uses_regexes(schema),
            schema_bytes: json_len(schema).max(1),
        }
    }

    /// The schema's size as compact JSON (at least 1).
    pub(super) fn schema_bytes(&self) -> usize {
        self.schema_bytes
    }

    /// Whether validating `instance` against the schema of `graph` is light.
    pub(super) fn admits(&self, graph: &SchemaGraph, instance: &Value) -> bool {
        let (mut nodes, mut text) = (LIGHT_NODES, LIGHT_TEXT_BYTES);
        let max_work = LIGHT_WORK.min(LIGHT_COST / self.schema_bytes);
        !self.regexes
            && is_small(instance, &mut nodes, &mut text)
            && check_work_within(graph, instance, max_work).is_ok()
    }
}

/// Whether `schema` may run a regular expression: `pattern`, `patternProperties`, or the `regex`
/// format, which compiles the checked string itself. Conservative: a property merely named
/// `pattern` counts too.
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::budgets::measure_schema;

    fn light(schema: &Value, instance: &Value) -> bool {
        LightBound::of(schema).admits(&measure_schema(schema).expect("within the budgets"), instance)
    }

    #[test]
    fn a_small_value_of_a_small_schema_without_regexes_is_light() {
        let schema = json!({ "type": "object", "properties": { "qty": { "type": "integer" } } });
        assert!(light(&schema, &json!({ "qty": 2 })));
    }

    #[test]
    fn a_schema_with_a_regex_is_never_light() {
        for schema in [
            json!({ "type": "string", "pattern": "^(a+)+$" }),
            json!({ "type": "object", "patternProperties": { "^x": { "type": "integer" } } }),
            json!({ "type": "object", "properties": { "re": { "type": "string", "format": "regex" } } }),
        ] {
            assert!(!light(&schema, &json!("aaaa")), "{schema}");
            assert!(!light(&schema, &json!({ "x1": 1, "re": "a" })), "{schema}");
        }
    }

    #[test]
    fn a_large_value_is_not_light() {
        let items = json!({ "type": "array", "items": { "type": "integer" } });
        let few: Vec<u32> = (0..100).collect();
        let many: Vec<u32> = (0..1000).collect();
        assert!(light(&items, &json!(few)));
        assert!(!light(&items, &json!(many)));
        let strings = json!({ "type": "string" });
        assert!(light(&strings, &json!("short")));
        assert!(!light(&strings, &json!("x".repeat(LIGHT_TEXT_BYTES + 1))));
    }

    #[test]
    fn many_applications_are_not_light() {
        // Every item is checked against its schema and eight branches: 200 items (within the
        // node count) pass 1,024 applications.
        let schema = json!({ "type": "array", "items": { "anyOf": [
            { "type": "integer" }, { "type": "string" }, { "type": "boolean" }, { "type": "null" },
            { "type": "object" }, { "type": "array" }, { "type": "number" }, { "const": 1 }
        ] } });
        let few: Vec<u32> = (0..50).collect();
        let more: Vec<u32> = (0..200).collect();
        assert!(light(&schema, &json!(few)));
        assert!(!light(&schema, &json!(more)));
    }

    #[test]
    fn few_applications_of_a_large_keyword_are_not_light() {
        // A `required` list of 2,000 names applied to each of 255 empty objects: few nodes, no
        // text, 256 applications, and hundreds of thousands of checks (millions of violations).
        let names: Vec<String> = (0..2000).map(|i| format!("n{i}")).collect();
        let required = json!({ "type": "array", "items": { "required": names } });
        let empties: Vec<Value> = (0..255).map(|_| json!({})).collect();
        assert!(!light(&required, &json!(empties)));
        assert!(light(&required, &json!([])));
        let constant = json!({ "type": "array", "items": { "const": "x".repeat(100_000) } });
        let words: Vec<&str> = (0..255).map(|_| "y").collect();
        assert!(!light(&constant, &json!(words)));
    }
}
