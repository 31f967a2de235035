use std::sync::Arc;

use crate::services::cpu_gate::{CpuBusy, CpuGate, SCHEMA_WORK_DEADLINE};
use serde_json::Value;
use svc_domain::contract::{
    CompiledSchema, Contract, SchemaCompileError, SchemaViolation, compile_schema, props_validator_key, validator_key,
};

/// What an entry costs beside its schema (its key, the validator's fixed parts), so that many
/// tiny schemas are bounded too.
const ENTRY_OVERHEAD_BYTES: usize = 512;

/// Compiled JSON Schema validators, compiled once per distinct schema and shared.
#[derive(Clone)]
pub struct SchemaCache {
    validators: moka::sync::Cache<String, Arc<CompiledSchema>>,
    cpu: CpuGate,
}

impl SchemaCache {
    /// Compiles and validates through `cpu`, the deployment's gate of CPU-heavy work; keeps
    /// compiled validators of schemas whose sizes (as compact JSON) add up to `schema_bytes`.
    /// Weighed by size, not counted: a schema may be 256 KiB, and a thousand of those compiled
    /// would be gigabytes.
    pub fn new(schema_bytes: u64, cpu: CpuGate) -> Self {
        Self {
            validators: moka::sync::Cache::builder()
                .weigher(|_key: &String, compiled: &Arc<CompiledSchema>| {
                    u32::try_from(compiled.schema_bytes() + ENTRY_OVERHEAD_BYTES).unwrap_or(u32::MAX)
                })
                .max_capacity(schema_bytes)
                .build(),
            cpu,
        }
    }

    /// `instance` checked against `schema`: handed back when it is valid, or its violations.
    /// Compiling and validating are CPU work on untrusted input, so they run on a blocking thread
    /// through the CPU gate (refused with [`CpuBusy`] when no slot frees in time), never on an
    /// async worker, and the answer comes by the deadline; only a light validation of a schema
    /// compiled before ([`CompiledSchema::light_violations`]: no regular expression, a small
    /// value, few applications of a small schema) runs where the caller is, which spares the
    /// hand-off to a thread and back. A schema that does not compile or is over a complexity
    /// budget (only possible for contracts stored before a rule change) is itself reported as a
    /// violation, so using such a contract answers an error instead of running it.
    ///
    /// The instance is moved to the blocking thread and back, not copied (a tool input may be
    /// megabytes, reserved by the HTTP adapter as parsed JSON: `svc_http`'s
    /// `parsed_json_budget.rs`); a check past its deadline keeps it until it ends, and the caller
    /// has its violations.
    pub async fn check(&self, schema: &Value, instance: Value) -> Result<Checked, CpuBusy> {
        self.check_keyed(validator_key(schema), || schema.clone(), instance)
            .await
    }

    /// [`SchemaCache::check`] against the props schema of `contract`, whose validator key the
    /// contract keeps: a warm render does not canonicalise its schema again.
    pub async fn check_props(&self, contract: &Contract, props: Value) -> Result<Checked, CpuBusy> {
        self.check_keyed(props_validator_key(contract), || contract.props_schema(), props)
            .await
    }

    /// `key` is the validator key ([`validator_key`]) of the schema `schema` gives.
    async fn check_keyed(
        &self,
        key: String,
        schema: impl FnOnce() -> Value,
        instance: Value,
    ) -> Result<Checked, CpuBusy> {
        if let Some(found) = self
            .validators
            .get(&key)
            .and_then(|compiled| compiled.light_violations(&instance))
        {
            return Ok(valid_or(instance, found));
        }
        // The blocking thread owns the instance and hands it back: past the deadline the caller
        // is answered while the check runs on, so it cannot borrow the caller's value.
        let (cache, schema) = (self.clone(), schema());
        let checking = self
            .cpu
            .start(move || {
                let found = cache.check_now(key, &schema, &instance);
                (instance, found)
            })
            .await?;
        Ok(match tokio::time::timeout(SCHEMA_WORK_DEADLINE, checking).await {
            Ok(Ok((instance, found))) => valid_or(instance, found),
            Ok(Err(panicked)) => {
                tracing::error!(error = %panicked, "schema validation panicked");
                Err(vec![whole_value("validation failed inside the server")])
            }
            // A validation already running cannot be interrupted; the budgets bound how long it
            // goes on, and the caller is answered now.
            Err(_) => Err(vec![whole_value(&format!(
                "validation stopped: it took longer than {} s",
                SCHEMA_WORK_DEADLINE.as_secs()
            ))]),
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

/// A checked instance: itself when it is valid, or its violations (never none).
pub type Checked = Result<Value, Vec<SchemaViolation>>;

fn valid_or(instance: Value, violations: Vec<SchemaViolation>) -> Checked {
    if violations.is_empty() {
        Ok(instance)
    } else {
        Err(violations)
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
        let cache = SchemaCache::new(1 << 20, CpuGate::unbounded());
        let at_most = |max: u64| json!({ "type": "integer", "maximum": max });
        let value = json!(9_007_199_254_740_993_u64);
        let within = cache
            .check(&at_most(9_007_199_254_740_993), value.clone())
            .await
            .unwrap();
        assert_eq!(within, Ok(value.clone()));
        // Canonically the same schema as the one just compiled; it must not answer for it.
        let beyond = cache.check(&at_most(9_007_199_254_740_992), value).await.unwrap();
        assert_eq!(beyond.map_err(|v| v.len()), Err(1));
    }

    #[tokio::test]
    async fn the_cache_keeps_schemas_up_to_their_bytes_not_a_count() {
        let cache = SchemaCache::new(100 * 1024, CpuGate::unbounded());
        // Ten distinct schemas of about 30 KiB each: three fit.
        for n in 0..10 {
            let schema = json!({ "type": "string", "description": format!("{n}{}", "d".repeat(30 * 1024)) });
            assert!(cache.check(&schema, json!("x")).await.unwrap().is_ok());
        }
        cache.validators.run_pending_tasks();
        assert!(cache.validators.weighted_size() <= 100 * 1024);
        assert!(
            (1..=3).contains(&cache.validators.entry_count()),
            "{} kept",
            cache.validators.entry_count()
        );
    }
}
