//! Fixture props: the smallest props a contract's `propsSpec` admits, for rendering a component
//! once before anyone has real props (an operator generating a blueprint). A schema's own
//! `default`, `const`, first `examples` entry or first `enum` value wins; otherwise each type gets
//! its empty value with every required property filled, so what the fixture omits is exactly what
//! real props may omit too.

use serde_json::{Map, Value, json};

/// How deep `$ref`s and nested schemas are followed before a value is cut to `null`.
const MAX_DEPTH: usize = 12;
/// Values built at most; past it, `null`. Depth alone does not bound the work: an object whose
/// fifty required properties each `$ref` the object itself needs 50^6 values at depth 12.
const MAX_VALUES: usize = 2_000;
/// Bytes (as JSON) of the values a schema gives (`default`, `const`, ...) copied at most; the
/// first given value that does not fit, and every one after it, is `null` (so measuring them
/// costs at most this much too). The count alone does not bound the memory: a thousand
/// properties may each `$ref` one 200 KB default.
const MAX_GIVEN_BYTES: usize = 1 << 20;

/// What is left to build.
struct Left {
    values: usize,
    given_bytes: usize,
}

/// Props for `props_schema`; always an object at the top.
pub fn fixture_props(props_schema: &Value) -> Value {
    let mut left = Left {
        values: MAX_VALUES,
        given_bytes: MAX_GIVEN_BYTES,
    };
    match value_for(props_schema, props_schema, 0, &mut left) {
        Value::Object(props) => Value::Object(props),
        _ => Value::Object(Map::new()),
    }
}

fn value_for(schema: &Value, root: &Value, depth: usize, left: &mut Left) -> Value {
    let Some(schema) = schema.as_object() else {
        return Value::Null; // `true`, or a malformed subschema: anything goes.
    };
    if depth > MAX_DEPTH || left.values == 0 {
        return Value::Null;
    }
    left.values -= 1;
    if let Some(given) = schema
        .get("const")
        .or_else(|| schema.get("default"))
        .or_else(|| first(schema.get("examples")))
        .or_else(|| first(schema.get("enum")))
    {
        let Some(bytes) = crate::text::json_len_at_most(given, left.given_bytes) else {
            left.given_bytes = 0;
            return Value::Null;
        };
        left.given_bytes -= bytes;
        return given.clone();
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        return value_for(target, root, depth + 1, left);
    }
    if let Some(branch) = first(schema.get("oneOf")).or_else(|| first(schema.get("anyOf"))) {
        return value_for(branch, root, depth + 1, left);
    }
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in parts {
            if let Value::Object(fields) = value_for(part, root, depth + 1, left) {
                merged.extend(fields);
            }
        }
        let own = object_for(schema, root, depth, left);
        merged.extend(own);
        return Value::Object(merged);
    }
    match declared_type(schema) {
        Some("object") => Value::Object(object_for(schema, root, depth, left)),
        Some("array") => array_for(schema, root, depth, left),
        Some("string") => string_for(schema),
        Some("integer") | Some("number") => number_for(schema),
        Some("boolean") => json!(false),
        Some(_) => Value::Null,
        None if schema.contains_key("properties") || schema.contains_key("required") => {
            Value::Object(object_for(schema, root, depth, left))
        }
        None if schema.contains_key("items") => array_for(schema, root, depth, left),
        None => Value::Null,
    }
}

/// The schema's type; of a list, the first that is not `null`.
fn declared_type(schema: &Map<String, Value>) -> Option<&str> {
    match schema.get("type")? {
        Value::String(name) => Some(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|name| *name != "null")
            .or(Some("null")),
        _ => None,
    }
}

fn object_for(schema: &Map<String, Value>, root: &Value, depth: usize, left: &mut Left) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut object = Map::new();
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Bool(true));
        object.insert(name.to_owned(), value_for(property, root, depth + 1, left));
    }
    // An optional property with a default: the card would show that default too.
    for (name, property) in properties.into_iter().flatten() {
        if !object.contains_key(name) && property.get("default").is_some() {
            object.insert(name.clone(), value_for(property, root, depth + 1, left));
        }
    }
    object
}

fn array_for(schema: &Map<String, Value>, root: &Value, depth: usize, left: &mut Left) -> Value {
    let min_items = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(3) as usize;
    let item = schema.get("items").unwrap_or(&Value::Bool(true));
    Value::Array((0..min_items).map(|_| value_for(item, root, depth + 1, left)).collect())
}

/// 0, or the least whole number above a positive lower bound.
fn number_for(schema: &Map<String, Value>) -> Value {
    let inclusive = schema.get("minimum").and_then(Value::as_f64).map(f64::ceil);
    let exclusive = schema
        .get("exclusiveMinimum")
        .and_then(Value::as_f64)
        .map(|bound| bound.floor() + 1.0);
    let least = inclusive.into_iter().chain(exclusive).fold(0.0_f64, f64::max);
    json!(least as i64)
}

/// `""`, or a plausible value for a format a component may parse (a date must be a date).
fn string_for(schema: &Map<String, Value>) -> Value {
    let formatted = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => Some("2025-01-01T00:00:00Z"),
        Some("date") => Some("2025-01-01"),
        Some("time") => Some("00:00:00Z"),
        Some("email") => Some("user@example.com"),
        Some("uri") | Some("url") | Some("iri") => Some("https://example.com/"),
        Some("uuid") => Some("00000000-0000-4000-8000-000000000000"),
        _ => None,
    };
    if let Some(text) = formatted {
        return json!(text);
    }
    let min_length = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0).min(64) as usize;
    json!("x".repeat(min_length))
}

fn first(list: Option<&Value>) -> Option<&Value> {
    list?.as_array()?.first()
}

/// A local `$ref` (`#/$defs/row`, `#/definitions/row`) inside the props schema.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_sharing_one_large_default_stop_at_the_byte_budget() {
        let big = "d".repeat(200_000);
        let names: Vec<String> = (0..1_000).map(|i| format!("p{i:04}")).collect();
        let properties: Map<String, Value> = names
            .iter()
            .map(|n| (n.clone(), json!({ "$ref": "#/$defs/big" })))
            .collect();
        let schema = json!({
            "type": "object",
            "$defs": { "big": { "type": "string", "default": big } },
            "required": names,
            "properties": properties,
        });
        let props = fixture_props(&schema);
        let props = props.as_object().unwrap();
        assert_eq!(props.len(), 1_000, "every required property is there");
        let copied = props.values().filter(|v| v.as_str() == Some(big.as_str())).count();
        // Each copy is 200,002 bytes of JSON: five fit in 1 MiB; the sixth does not, and from
        // there every given value is null.
        assert_eq!(copied, MAX_GIVEN_BYTES / (big.len() + 2));
        assert!(props.values().all(|v| v.is_null() || v.as_str() == Some(big.as_str())));
        assert!(props["p0000"].is_string() && props["p0999"].is_null(), "in order");
    }

    #[test]
    fn a_schema_that_fans_out_at_every_level_stops_at_the_value_budget() {
        let names: Vec<String> = (0..50).map(|i| format!("p{i}")).collect();
        let properties: Map<String, Value> = names
            .iter()
            .map(|n| (n.clone(), json!({ "$ref": "#/$defs/node" })))
            .collect();
        let schema = json!({
            "type": "object",
            "$defs": { "node": { "type": "object", "required": names, "properties": properties } },
            "required": ["root"],
            "properties": { "root": { "$ref": "#/$defs/node" } }
        });
        let props = fixture_props(&schema);
        assert!(props["root"]["p0"].is_object(), "{props}");
    }

    #[test]
    fn each_type_gets_its_empty_value_and_only_required_properties_are_filled() {
        let schema = json!({
            "type": "object",
            "required": ["title", "count", "ratio", "done", "rows", "owner", "tag"],
            "properties": {
                "title": { "type": "string" },
                "count": { "type": "integer" },
                "ratio": { "type": "number" },
                "done": { "type": "boolean" },
                "rows": { "type": "array", "items": { "type": "object", "required": ["id"] } },
                "owner": { "type": "object", "required": ["name"], "properties": { "name": { "type": "string" }, "age": { "type": "integer" } } },
                "tag": { "type": ["null", "string"] },
                "note": { "type": "string" }
            }
        });
        assert_eq!(
            fixture_props(&schema),
            json!({ "title": "", "count": 0, "ratio": 0, "done": false, "rows": [], "owner": { "name": "" }, "tag": "" })
        );
    }

    #[test]
    fn defaults_constants_examples_and_enums_win_over_the_type() {
        let schema = json!({
            "type": "object",
            "required": ["status", "mode", "limit", "kind"],
            "properties": {
                "status": { "type": "string", "enum": ["open", "closed"] },
                "mode": { "type": "string", "const": "compact" },
                "limit": { "type": "integer", "examples": [25, 50], "minimum": 1 },
                "kind": { "type": "string", "default": "order", "examples": ["invoice"] },
                "page": { "type": "integer", "default": 1 }
            }
        });
        assert_eq!(
            fixture_props(&schema),
            json!({ "status": "open", "mode": "compact", "limit": 25, "kind": "order", "page": 1 })
        );
    }

    #[test]
    fn bounds_and_formats_give_values_the_schema_admits() {
        let schema = json!({
            "type": "object",
            "required": ["code", "qty", "price", "tags", "due", "site"],
            "properties": {
                "code": { "type": "string", "minLength": 3 },
                "qty": { "type": "integer", "minimum": 2 },
                "price": { "type": "number", "exclusiveMinimum": 0 },
                "tags": { "type": "array", "minItems": 2, "items": { "type": "string" } },
                "due": { "type": "string", "format": "date-time" },
                "site": { "type": "string", "format": "uri" }
            }
        });
        assert_eq!(
            fixture_props(&schema),
            json!({ "code": "xxx", "qty": 2, "price": 1, "tags": ["", ""], "due": "2025-01-01T00:00:00Z", "site": "https://example.com/" })
        );
    }

    #[test]
    fn refs_branches_and_all_of_are_followed() {
        let schema = json!({
            "type": "object",
            "required": ["row", "either", "both"],
            "$defs": { "row": { "type": "object", "required": ["id"], "properties": { "id": { "type": "integer" } } } },
            "properties": {
                "row": { "$ref": "#/$defs/row" },
                "either": { "anyOf": [{ "type": "number" }, { "type": "string" }] },
                "both": { "allOf": [{ "$ref": "#/$defs/row" }, { "required": ["label"], "properties": { "label": { "type": "string" } } }] }
            }
        });
        assert_eq!(
            fixture_props(&schema),
            json!({ "row": { "id": 0 }, "either": 0, "both": { "id": 0, "label": "" } })
        );
    }

    #[test]
    fn a_self_referencing_schema_ends() {
        let schema = json!({
            "type": "object",
            "required": ["node"],
            "$defs": { "node": { "type": "object", "required": ["child"], "properties": { "child": { "$ref": "#/$defs/node" } } } },
            "properties": { "node": { "$ref": "#/$defs/node" } }
        });
        let props = fixture_props(&schema);
        assert!(props.pointer("/node/child/child").is_some(), "{props}");
    }

    #[test]
    fn a_missing_or_non_object_schema_gives_an_empty_object() {
        assert_eq!(fixture_props(&json!({ "type": "object" })), json!({}));
        assert_eq!(fixture_props(&json!(true)), json!({}));
        assert_eq!(fixture_props(&json!({ "type": "string" })), json!({}));
    }
}
