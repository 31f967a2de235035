//! Reuse keys: `contractHash` (shape only), `variantKey` (design-time variance) and
//! `propsSchemaHash`, all sha256 lowercase hex over the RFC 8785 canonical form.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{Contract, EntrySchema};

/// Keywords that annotate a schema without changing the data it accepts; they are dropped from a
/// schema object's own keys before hashing, so rewording a description keeps the same
/// contractHash. A property, `$defs` entry, intent, channel or slot that happens to carry one of
/// these names is data flow and is kept.
const ANNOTATION_KEYWORDS: [&str; 5] = ["description", "title", "examples", "$comment", "default"];

/// Schema keywords whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 12] = [
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Schema keywords whose value is an array of schemas (`items` too, in its pre-2020 array form).
const SCHEMA_ARRAY_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Schema keywords whose value maps names to schemas: the names are data, the values schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keys of an `actionSpec` or `streamSpec` entry that do not shape the data flow.
const ENTRY_ANNOTATIONS: [&str; 1] = ["description"];

/// Keys of a `contextSpec` slot that do not shape the data flow: its `description`, and its
/// `default`, the value the slot starts with. A default is a value, not a shape: the mount reads
/// it from the session's own contract (never from the component), so a cached component serves a
/// contract with another default unchanged and the slot still starts at the caller's default.
const SLOT_ANNOTATIONS: [&str; 2] = ["description", "default"];

/// sha256 lowercase hex of raw bytes (content addresses of compiled code).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

thread_local! {
    /// Canonicalisations done on this thread: what tests count to see a key computed once.
    static CANONICALISED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many values [`canonical_sha256`] canonicalised on the calling thread so far (a test seam:
/// a key kept per contract must not be computed again on every call).
pub fn canonicalisations_on_this_thread() -> usize {
    CANONICALISED.get()
}

/// sha256 lowercase hex over the RFC 8785 (JCS) canonical form of `value`.
pub fn canonical_sha256(value: &Value) -> String {
    CANONICALISED.set(CANONICALISED.get() + 1);
    let canonical = serde_json_canonicalizer::to_string(value).expect("a serde_json::Value always canonicalises");
    sha256_hex(canonical.as_bytes())
}

/// Hash of the contract's shape: annotations stripped, then canonicalised.
pub fn contract_hash(contract: &Contract) -> String {
    contract.hash_once(|contract| canonical_sha256(&strip_annotations(&contract.as_value())))
}

/// Hash of the variance; an absent variance hashes like an empty object.
pub fn variant_key(variance: Option<&Value>) -> String {
    match variance {
        Some(Value::Null) | None => canonical_sha256(&Value::Object(Map::new())),
        Some(v) => canonical_sha256(v),
    }
}

/// `propsSchemaHash`: the hash of the schema a render of `contract` enforces (computed once per
/// contract). Annotations included: it is the key compiled validators are cached by, as the
/// canonical hash of any other schema is.
pub fn props_schema_hash(contract: &Contract) -> String {
    contract.props_schema_hash_once(|contract| canonical_sha256(&contract.props_schema()))
}

/// The key compiled validators of `schema` are cached by: its canonical hash, then the exact
/// digits of every integer beyond ±2^53 in it. RFC 8785 writes numbers as doubles, so two schemas
/// that differ only in such an integer (`maximum`, `const`, `enum`) hash alike; as a contract's
/// identity that is the RFC's rule, but a validator of one must never check the other.
pub fn validator_key(schema: &Value) -> String {
    let mut key = canonical_sha256(schema);
    append_exact_large_integers(schema, &mut key);
    key
}

/// [`validator_key`] of the contract's props schema (computed once per contract). Its canonical
/// hash is the [`props_schema_hash`]: the props schema is canonicalised once for both.
pub fn props_validator_key(contract: &Contract) -> String {
    contract.props_validator_key_once(|contract| {
        let mut key = props_schema_hash(contract);
        // Absent, the props schema is `{ "type": "object" }`: no integer to append.
        if let Some(declared) = contract.as_map().get("propsSpec") {
            append_exact_large_integers(declared, &mut key);
        }
        key
    })
}

/// [`validator_key`] of `entry`'s schema (computed once per contract and entry); `None` when the
/// contract does not declare the entry.
pub fn entry_validator_key(contract: &Contract, entry: &EntrySchema) -> Option<String> {
    contract.entry_validator_key_once(entry, validator_key)
}

/// Appends `:<digits>` for each integer in `value` that a double cannot hold exactly.
fn append_exact_large_integers(value: &Value, key: &mut String) {
    const EXACT_IN_A_DOUBLE: u64 = 1 << 53;
    match value {
        Value::Number(n) => {
            let beyond = n
                .as_u64()
                .map(|u| u > EXACT_IN_A_DOUBLE)
                .or_else(|| n.as_i64().map(|i| i.unsigned_abs() > EXACT_IN_A_DOUBLE));
            if beyond == Some(true) {
                key.push(':');
                key.push_str(&n.to_string());
            }
        }
        Value::Array(items) => items.iter().for_each(|item| append_exact_large_integers(item, key)),
        Value::Object(map) => map.values().for_each(|item| append_exact_large_integers(item, key)),
        _ => {}
    }
}

/// The contract with annotations removed where they annotate: a schema's own keywords and an
/// entry's own keys. Names chosen by the contract (properties, `$defs`, intents, channels, slots)
/// are kept whatever they are, and so is every other value.
fn strip_annotations(contract: &Value) -> Value {
    let Value::Object(sections) = contract else {
        return contract.clone();
    };
    let stripped = sections.iter().map(|(key, value)| {
        let value = match key.as_str() {
            "propsSpec" => strip_schema(value),
            "actionSpec" | "streamSpec" => strip_entries(value, &ENTRY_ANNOTATIONS),
            "contextSpec" => strip_entries(value, &SLOT_ANNOTATIONS),
            _ => value.clone(),
        };
        (key.clone(), value)
    });
    Value::Object(stripped.collect())
}

/// A named-entry section (`{ "<name>": { schema, ... } }`): each entry loses its `annotations`
/// and its `schema` is stripped as a schema.
fn strip_entries(section: &Value, annotations: &[&str]) -> Value {
    let Value::Object(entries) = section else {
        return section.clone();
    };
    let stripped = entries.iter().map(|(name, entry)| {
        let entry = match entry {
            Value::Object(keys) => Value::Object(
                keys.iter()
                    .filter(|(key, _)| !annotations.contains(&key.as_str()))
                    .map(|(key, value)| match key.as_str() {
                        "schema" => (key.clone(), strip_schema(value)),
                        _ => (key.clone(), value.clone()),
                    })
                    .collect(),
            ),
            other => other.clone(),
        };
        (name.clone(), entry)
    });
    Value::Object(stripped.collect())
}

/// A JSON Schema without its annotation keywords, at every depth that is itself a schema.
/// Keyword values that are data (`enum`, `const`, `required`, unknown keywords) are kept verbatim.
fn strip_schema(schema: &Value) -> Value {
    let Value::Object(keywords) = schema else {
        // `true` / `false`, or something that is no schema: nothing annotates it.
        return schema.clone();
    };
    let stripped = keywords
        .iter()
        .filter(|(keyword, _)| !ANNOTATION_KEYWORDS.contains(&keyword.as_str()))
        .map(|(keyword, value)| {
            let value = if SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) {
                strip_schema_map(value)
            } else if SCHEMA_KEYWORDS.contains(&keyword.as_str()) || SCHEMA_ARRAY_KEYWORDS.contains(&keyword.as_str()) {
                strip_subschemas(value)
            } else {
                value.clone()
            };
            (keyword.clone(), value)
        });
    Value::Object(stripped.collect())
}

/// One schema, or an array of schemas.
fn strip_subschemas(value: &Value) -> Value {
    match value {
        Value::Array(schemas) => Value::Array(schemas.iter().map(strip_schema).collect()),
        schema => strip_schema(schema),
    }
}

/// `{ "<name>": schema }`: the names are kept, each schema is stripped.
fn strip_schema_map(value: &Value) -> Value {
    match value {
        Value::Object(named) => Value::Object(
            named
                .iter()
                .map(|(name, schema)| (name.clone(), strip_schema(schema)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_a_double_cannot_hold_keep_their_validators_apart() {
        let at = |max: Value| json!({ "type": "object", "properties": { "n": { "type": "integer", "maximum": max } } });
        let (a, b) = (
            at(json!(9_007_199_254_740_993_u64)),
            at(json!(9_007_199_254_740_992_u64)),
        );
        assert_eq!(
            canonical_sha256(&a),
            canonical_sha256(&b),
            "RFC 8785 writes both as one double"
        );
        assert_ne!(validator_key(&a), validator_key(&b));
        let (small_a, small_b) = (at(json!(10)), at(json!(10)));
        assert_eq!(
            validator_key(&small_a),
            canonical_sha256(&small_b),
            "no suffix when every integer is exact"
        );
        let negative = |min: i64| json!({ "minimum": min });
        assert_ne!(
            validator_key(&negative(-9_007_199_254_740_993)),
            validator_key(&negative(-9_007_199_254_740_992))
        );
        let props = |spec: Value| contract(json!({ "propsSpec": spec }));
        assert_eq!(props_validator_key(&props(a.clone())), validator_key(&a));
        assert_ne!(props_validator_key(&props(a)), props_validator_key(&props(b)));
    }

    fn contract(v: Value) -> Contract {
        Contract::from_agreed(v.as_object().unwrap().clone())
    }

    #[test]
    fn declared_order_is_kept_but_never_changes_the_contract_hash() {
        // The card shows fields in the order the agent declared them; the reuse key must not see it.
        let forward: Value = serde_json::from_str(
            r#"{"propsSpec":{"type":"object","properties":{"sku":{"type":"string"},"amount":{"type":"number"},"currency":{"type":"string"}}},"actionSpec":{"reject":{},"approve":{}}}"#,
        )
        .unwrap();
        let backward: Value = serde_json::from_str(
            r#"{"actionSpec":{"approve":{},"reject":{}},"propsSpec":{"properties":{"currency":{"type":"string"},"amount":{"type":"number"},"sku":{"type":"string"}},"type":"object"}}"#,
        )
        .unwrap();
        let names = |value: &Value| -> Vec<String> {
            value["propsSpec"]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(names(&forward), ["sku", "amount", "currency"]);
        assert_eq!(names(&backward), ["currency", "amount", "sku"]);
        assert_eq!(
            contract_hash(&contract(forward.clone())),
            contract_hash(&contract(backward))
        );
        // The same digest main computed before declared order was kept (JCS sorts keys itself).
        assert_eq!(
            contract_hash(&contract(forward)),
            "cd25601f2fa640e389d70f7837cc12b7b3f69888db587430a6693c60ab11b205"
        );
    }

    #[test]
    fn hash_is_lowercase_hex_sha256_of_the_jcs_form() {
        // RFC 8785 orders keys and prints numbers in their shortest form; the digest is of those bytes.
        let value = json!({ "b": 1.0, "a": [true, null, "x"] });
        let expected = hex::encode(Sha256::digest(br#"{"a":[true,null,"x"],"b":1}"#));
        assert_eq!(canonical_sha256(&value), expected);
    }

    #[test]
    fn descriptions_do_not_change_the_contract_hash_but_types_do() {
        let a = contract(json!({ "propsSpec": { "type": "object", "description": "one" } }));
        let b = contract(json!({ "propsSpec": { "type": "object", "description": "two" } }));
        let c = contract(json!({ "propsSpec": { "type": "array" } }));
        assert_eq!(contract_hash(&a), contract_hash(&b));
        assert_ne!(contract_hash(&a), contract_hash(&c));
    }

    /// Pairs of contracts that differ in shape: a name that is also an annotation keyword is data
    /// flow wherever the contract chooses names, and values that are data are kept.
    #[test]
    fn names_that_look_like_annotations_change_the_contract_hash() {
        let pairs = [
            (
                "a property named title is a property",
                json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" }, "n": { "type": "number" } } } }),
                json!({ "propsSpec": { "type": "object", "properties": { "n": { "type": "number" } } } }),
            ),
            (
                "the type of a property named title",
                json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } }),
                json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "number" } } } }),
            ),
            (
                "a nested property named description",
                json!({ "propsSpec": { "type": "object", "properties": { "rows": { "type": "array", "items": { "type": "object", "properties": { "description": { "type": "string" } } } } } } }),
                json!({ "propsSpec": { "type": "object", "properties": { "rows": { "type": "array", "items": { "type": "object", "properties": {} } } } } }),
            ),
            (
                "a $defs entry named default",
                json!({ "propsSpec": { "type": "object", "$defs": { "default": { "type": "string" } } } }),
                json!({ "propsSpec": { "type": "object", "$defs": { "default": { "type": "integer" } } } }),
            ),
            (
                "a definitions entry named examples",
                json!({ "propsSpec": { "type": "object", "definitions": { "examples": { "type": "string" } } } }),
                json!({ "propsSpec": { "type": "object", "definitions": {} } }),
            ),
            (
                "a patternProperties entry named $comment",
                json!({ "propsSpec": { "type": "object", "patternProperties": { "$comment": { "type": "string" } } } }),
                json!({ "propsSpec": { "type": "object", "patternProperties": {} } }),
            ),
            (
                "a dependentSchemas entry named title",
                json!({ "propsSpec": { "type": "object", "dependentSchemas": { "title": { "required": ["n"] } } } }),
                json!({ "propsSpec": { "type": "object", "dependentSchemas": {} } }),
            ),
            (
                "an intent named title",
                json!({ "actionSpec": { "title": { "schema": { "type": "string" } } } }),
                json!({ "actionSpec": {} }),
            ),
            (
                "a property named title inside an action schema",
                json!({ "actionSpec": { "save": { "schema": { "type": "object", "properties": { "title": { "type": "string" } } } } } }),
                json!({ "actionSpec": { "save": { "schema": { "type": "object", "properties": { "title": { "type": "number" } } } } } }),
            ),
            (
                "a channel named description",
                json!({ "streamSpec": { "description": { "mode": "append", "schema": { "type": "string" } } } }),
                json!({ "streamSpec": {} }),
            ),
            (
                "a slot named default",
                json!({ "contextSpec": { "default": { "schema": { "type": "string" } } } }),
                json!({ "contextSpec": { "default": { "schema": { "type": "number" } } } }),
            ),
            (
                "a const object with a title key",
                json!({ "propsSpec": { "type": "object", "properties": { "k": { "const": { "title": "a" } } } } }),
                json!({ "propsSpec": { "type": "object", "properties": { "k": { "const": {} } } } }),
            ),
        ];
        for (case, a, b) in pairs {
            assert_ne!(contract_hash(&contract(a)), contract_hash(&contract(b)), "{case}");
        }
    }

    /// Pairs of contracts with the same shape: annotations on a schema or on an entry, at any depth.
    #[test]
    fn annotations_do_not_change_the_contract_hash() {
        let pairs = [
            (
                "a schema's own title and description",
                json!({ "propsSpec": { "type": "object", "title": "Card", "description": "one" } }),
                json!({ "propsSpec": { "type": "object", "title": "Panel", "description": "two" } }),
            ),
            (
                "annotations of a property schema",
                json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string", "title": "Title", "description": "heading", "default": "x", "examples": ["a"], "$comment": "c" } } } }),
                json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } }),
            ),
            (
                "annotations under items, anyOf, $defs and additionalProperties",
                json!({ "propsSpec": { "type": "object",
                    "properties": { "rows": { "type": "array", "items": { "type": "string", "description": "row" } } },
                    "anyOf": [{ "required": ["rows"], "title": "with rows" }],
                    "$defs": { "id": { "type": "string", "$comment": "opaque" } },
                    "additionalProperties": { "description": "anything else" } } }),
                json!({ "propsSpec": { "type": "object",
                    "properties": { "rows": { "type": "array", "items": { "type": "string" } } },
                    "anyOf": [{ "required": ["rows"] }],
                    "$defs": { "id": { "type": "string" } },
                    "additionalProperties": {} } }),
            ),
            (
                "an entry's description",
                json!({ "actionSpec": { "save": { "schema": { "type": "string", "description": "what" }, "description": "saves" } },
                        "streamSpec": { "ticks": { "mode": "append", "schema": {}, "description": "ticks" } } }),
                json!({ "actionSpec": { "save": { "schema": { "type": "string" } } },
                        "streamSpec": { "ticks": { "mode": "append", "schema": {} } } }),
            ),
            (
                "a slot's default, a value the session supplies",
                json!({ "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "a", "description": "open tab" } } }),
                json!({ "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "b" } } }),
            ),
        ];
        for (case, a, b) in pairs {
            assert_eq!(contract_hash(&contract(a)), contract_hash(&contract(b)), "{case}");
        }
    }

    #[test]
    fn absent_variance_equals_empty_variance() {
        assert_eq!(variant_key(None), variant_key(Some(&json!({}))));
        assert_ne!(variant_key(None), variant_key(Some(&json!({ "density": "compact" }))));
    }
}
