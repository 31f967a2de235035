use std::sync::Arc;

use serde_json::Value;
use svc_domain::contract::{SchemaViolation, canonical_sha256, compile_schema, violations};

/// Compiled JSON Schema validators, compiled once per distinct schema and shared.
#[derive(Clone)]
pub struct SchemaCache {
    validators: moka::sync::Cache<String, Arc<jsonschema::Validator>>,
}

impl SchemaCache {
    pub fn new(capacity: u64) -> Self {
        Self {
            validators: moka::sync::Cache::new(capacity),
        }
    }

    /// Violations of `instance` against `schema`; a schema that does not compile (only possible
    /// for contracts stored before a rule change) is itself reported as a violation.
    pub fn check(&self, schema: &Value, instance: &Value) -> Vec<SchemaViolation> {
        let key = canonical_sha256(schema);
        let compiled = self
            .validators
            .try_get_with(key, || compile_schema(schema).map(Arc::new))
            .map_err(|e| e.to_string());
        match compiled {
            Ok(validator) => violations(&validator, instance),
            Err(reason) => vec![SchemaViolation {
                path: String::new(),
                message: format!("schema does not compile: {reason}"),
            }],
        }
    }
}
