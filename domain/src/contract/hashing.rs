//! Reuse keys: `contractHash` (shape only), `variantKey` (design-time variance) and
//! `propsSchemaHash`, all sha256 lowercase hex over the RFC 8785 canonical form.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::Contract;

/// Keywords that annotate a schema without changing the data it accepts; they are dropped before
/// hashing so rewording a description keeps the same contractHash.
const ANNOTATION_KEYWORDS: [&str; 5] = ["description", "title", "examples", "$comment", "default"];

/// sha256 lowercase hex of raw bytes (content addresses of compiled code).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// sha256 lowercase hex over the RFC 8785 (JCS) canonical form of `value`.
pub fn canonical_sha256(value: &Value) -> String {
    let canonical = serde_json_canonicalizer::to_string(value).expect("a serde_json::Value always canonicalises");
    sha256_hex(canonical.as_bytes())
}

/// Hash of the contract's shape: annotations stripped, then canonicalised.
pub fn contract_hash(contract: &Contract) -> String {
    canonical_sha256(&strip_annotations(&contract.as_value()))
}

/// Hash of the variance; an absent variance hashes like an empty object.
pub fn variant_key(variance: Option<&Value>) -> String {
    match variance {
        Some(Value::Null) | None => canonical_sha256(&Value::Object(Map::new())),
        Some(v) => canonical_sha256(v),
    }
}

/// `propsSchemaHash`: the hash of the schema the paired render enforces.
pub fn props_schema_hash(enforced_schema: &Value) -> String {
    canonical_sha256(enforced_schema)
}

fn strip_annotations(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !ANNOTATION_KEYWORDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip_annotations(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_annotations).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract(v: Value) -> Contract {
        Contract::from_agreed(v.as_object().unwrap().clone())
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

    #[test]
    fn absent_variance_equals_empty_variance() {
        assert_eq!(variant_key(None), variant_key(Some(&json!({}))));
        assert_ne!(variant_key(None), variant_key(Some(&json!({ "density": "compact" }))));
    }
}
