//! Bytes to a JSON value that satisfies one of the committed schemas.

use std::sync::LazyLock;

use serde_json::Value;

use crate::ManifestError;

pub(crate) static MANIFEST_VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| validator(crate::MANIFEST_SCHEMA));
pub(crate) static UI_VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| validator(crate::UI_SCHEMA));

fn validator(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema).expect("the committed schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the committed schema compiles")
}

/// Parses `bytes` as JSON and checks it against `schema`; at most three violations are named.
pub(crate) fn checked(bytes: &[u8], schema: &jsonschema::Validator) -> Result<Value, ManifestError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ManifestError(format!("not JSON: {e} (line {}, column {})", e.line(), e.column())))?;
    let errors: Vec<String> = schema
        .iter_errors(&value)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {e} (rule: {})", e.kind().keyword())
        })
        .collect();
    if !errors.is_empty() {
        return Err(ManifestError(errors.join("; ")));
    }
    Ok(value)
}

/// A schema-valid value into its typed form (the schema and the type agree, so this fails only
/// if they drift apart).
pub(crate) fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ManifestError> {
    serde_json::from_value(value).map_err(|e| ManifestError(e.to_string()))
}
