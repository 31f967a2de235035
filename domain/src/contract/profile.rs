//! The `propsSchemaProfile`: `grammar-safe` when the enforced schema stays inside the subset that
//! LLM structured-output modes enforce, `full` otherwise.
//!
//! The grammar-safe subset (documented in docs/contract.md):
//! - keywords `type`, `properties`, `required`, `items`, `enum`, `const`, `anyOf`, `$ref`, `$defs`,
//!   `description`, `title`, `additionalProperties` (only `false`), `format` (only `date-time`,
//!   `date`, `time`, `email`, `uri`, `uuid`);
//! - every object lists all its properties in `required` and sets `additionalProperties: false`;
//! - `$ref` only to local `#/$defs/...`.
//!
//! Anything else (numeric bounds, patterns, `oneOf`, `allOf`, `not`, open objects, optional
//! properties) makes the profile `full`.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropsSchemaProfile {
    GrammarSafe,
    Full,
}

impl PropsSchemaProfile {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GrammarSafe => "grammar-safe",
            Self::Full => "full",
        }
    }
}

const SAFE_KEYWORDS: [&str; 12] = [
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "additionalProperties",
];
const SAFE_FORMATS: [&str; 6] = ["date-time", "date", "time", "email", "uri", "uuid"];

pub fn profile_of(schema: &Value) -> PropsSchemaProfile {
    if is_safe(schema) {
        PropsSchemaProfile::GrammarSafe
    } else {
        PropsSchemaProfile::Full
    }
}

fn is_safe(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.iter().all(|(keyword, value)| keyword_is_safe(map, keyword, value))
}

fn keyword_is_safe(map: &Map<String, Value>, keyword: &str, value: &Value) -> bool {
    match keyword {
        "format" => value.as_str().is_some_and(|f| SAFE_FORMATS.contains(&f)),
        "additionalProperties" => value == &Value::Bool(false),
        "$ref" => value.as_str().is_some_and(|r| r.starts_with("#/$defs/")),
        "properties" => value
            .as_object()
            .is_some_and(|props| props.values().all(is_safe) && all_required(map, props) && closed(map)),
        "$defs" => value.as_object().is_some_and(|defs| defs.values().all(is_safe)),
        "items" => is_safe(value),
        "anyOf" => value.as_array().is_some_and(|alts| alts.iter().all(is_safe)),
        other => SAFE_KEYWORDS.contains(&other),
    }
}

fn all_required(map: &Map<String, Value>, props: &Map<String, Value>) -> bool {
    // A set: a schema of thousands of properties and as many `required` names stays linear.
    let required: std::collections::HashSet<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props.keys().all(|k| required.contains(k.as_str()))
}

fn closed(map: &Map<String, Value>) -> bool {
    map.get("additionalProperties") == Some(&Value::Bool(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closed_fully_required_objects_are_grammar_safe() {
        let schema = json!({
            "type": "object",
            "properties": { "title": { "type": "string" }, "when": { "type": "string", "format": "date-time" } },
            "required": ["title", "when"],
            "additionalProperties": false
        });
        assert_eq!(profile_of(&schema), PropsSchemaProfile::GrammarSafe);
    }

    #[test]
    fn optional_properties_bounds_and_open_objects_are_full() {
        for schema in [
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "additionalProperties": false }),
            json!({ "type": "object", "properties": { "a": { "type": "integer", "minimum": 1 } }, "required": ["a"], "additionalProperties": false }),
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] }),
            json!({ "oneOf": [{ "type": "string" }] }),
            json!({ "type": "string", "pattern": "^a" }),
        ] {
            assert_eq!(profile_of(&schema), PropsSchemaProfile::Full, "{schema}");
        }
    }
}
