use std::sync::Arc;

use crate::services::cpu_gate::{CpuBusy, CpuGate, SCHEMA_WORK_DEADLINE};
use serde_json::Value;
use svc_domain::contract::{
    CompiledSchema, Contract, SchemaCompileError, SchemaViolation, compile_schema, props_validator_key, validator_key,
};

/// Compiled JSON Schema validators, compiled once per distinct schema and shared.
#[derive(Clone)]
pub struct SchemaCache {
    validators: moka::sync::Cache<String, Arc<CompiledSchema>>,
    cpu: CpuGate,
}

impl SchemaCache {
    /// Compiles and validates through `cpu`, the deployment's gate of CPU-heavy work.
    pub fn new(capacity: u64, cpu: CpuGate) -> Self {
        Self {
            validators: moka::sync::Cache::new(capacity),
            cpu,
        }
    }

    /// Violations of `instance` against `schema`. Compiling and validating are CPU work on
    /// untrusted input, so they run on a blocking thread through the CPU gate (refused with
    /// [`CpuBusy`] when no slot frees in time), never on an async worker, and the answer comes by
    /// the deadline; only a light validation of a schema compiled before
    /// ([`CompiledSchema::light_violations`]: no regular expression, a small value, few
    /// applications of a small schema) runs where the caller is, which spares the hand-off to a
    /// thread and back. A schema that does not compile or is over a complexity budget (only possible for contracts stored before a rule
    /// change) is itself reported as a violation, so using such a contract answers an error
    /// instead of running it.
    pub async fn check(&self, schema: &Value, instance: &Value) -> Result<Vec<SchemaViolation>, CpuBusy> {
        self.check_keyed(validator_key(schema), || schema.clone(), instance)
            .await
    }

    /// [`SchemaCache::check`] against the props schema of `contract`, whose validator key the
    /// contract keeps: a warm render does not canonicalise its schema again.
    pub async fn check_props(&self, contract: &Contract, props: &Value) -> Result<Vec<SchemaViolation>, CpuBusy> {
        self.check_keyed(props_validator_key(contract), || contract.props_schema(), props)
            .await
    }

    /// `key` is the validator key ([`validator_key`]) of the schema `schema` gives.
    async fn check_keyed(
        &self,
        key: String,
        schema: impl FnOnce() -> Value,
        instance: &Value,
    ) -> Result<Vec<SchemaViolation>, CpuBusy> {
        if let Some(found) = self
            .validators
            .get(&key)
            .and_then(|compiled| compiled.light_violations(instance))
        {
            return Ok(found);
        }
        let (cache, schema, instance) = (self.clone(), schema(), instance.clone());
        let checking = self.cpu.start(move || cache.check_now(key, &schema, &instance)).await?;
        Ok(match tokio::time::timeout(SCHEMA_WORK_DEADLINE, checking).await {
            Ok(Ok(found)) => found,
            Ok(Err(panicked)) => {
                tracing::error!(error = %panicked, "schema validation panicked");
                vec![whole_value("validation failed inside the server")]
            }
            // A validation already running cannot be interrupted; the budgets bound how long it
            // goes on, and the caller is answered now.
            Err(_) => vec![whole_value(&format!(
                "validation stopped: it took longer than {} s",
                SCHEMA_WORK_DEADLINE.as_secs()
            ))],
        })
    }

    fn check_now(&self, key: String, schema: &Value, instance: &Value) -> Vec<SchemaViolation> {
        let compiled = self
            .validators
            .try_get_with(key, || compile_schema(schema).map(Arc::new));
        match compiled {
            Ok(compiled) => compiled.violations(instance),
            Err(refused) => vec![whole_value(&match refused.as_ref() {
                SchemaCompileError::OverBudget(over) => format!("the contract's schema is refused: {over}"),
                SchemaCompileError::Invalid(reason) => format!("schema does not compile: {reason}"),
            })],
        }
    }
}

fn whole_value(message: &str) -> SchemaViolation {
    SchemaViolation {
        path: String::new(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn schemas_that_differ_beyond_a_doubles_precision_are_checked_by_their_own_validators() {
        let cache = SchemaCache::new(16, CpuGate::unbounded());
        let at_most = |max: u64| json!({ "type": "integer", "maximum": max });
        let value = json!(9_007_199_254_740_993_u64);
        let within = cache.check(&at_most(9_007_199_254_740_993), &value).await.unwrap();
        assert!(within.is_empty(), "{within:?}");
        // Canonically the same schema as the one just compiled; it must not answer for it.
        let beyond = cache.check(&at_most(9_007_199_254_740_992), &value).await.unwrap();
        assert_eq!(beyond.len(), 1, "{beyond:?}");
    }
}
