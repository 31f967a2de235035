use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::services::cpu_gate::{CpuBusy, CpuGate, SCHEMA_WORK_DEADLINE};
use serde_json::Value;
use svc_domain::contract::{
    AgreedValidators, CompiledSchema, Contract, EntrySchema, SchemaCompileError, SchemaViolation, Violations,
    compile_schema, entry_validator_key, props_validator_key, validator_key,
};

/// What an entry costs beside its schema (its key, the validator's fixed parts), so that many
/// tiny schemas are bounded too.
const ENTRY_OVERHEAD_BYTES: usize = 512;

/// A cache entry's weight: what its validator may keep in memory ([`CompiledSchema::weight_bytes`]:
/// its schema's size, and what each of its patterns may take compiled) and the entry's own
/// overhead.
fn compiled_weight(compiled: &CompiledSchema) -> u32 {
    u32::try_from(compiled.weight_bytes().saturating_add(ENTRY_OVERHEAD_BYTES)).unwrap_or(u32::MAX)
}

/// Compiles the schema a check needs when its validator is not cached; runs on the blocking thread.
type Compile = Box<dyn FnOnce() -> Result<CompiledSchema, SchemaCompileError> + Send>;

/// Compiled JSON Schema validators, compiled once per distinct schema and shared.
#[derive(Clone)]
pub struct SchemaCache {
    validators: moka::sync::Cache<String, Arc<CompiledSchema>>,
    cpu: CpuGate,
    /// Schemas this cache compiled because no validator was kept for them: what tests count to
    /// see a schema compiled once.
    compiled: Arc<AtomicU64>,
}

impl SchemaCache {
    /// Compiles and validates through `cpu`, the deployment's gate of CPU-heavy work; keeps
    /// compiled validators whose weights ([`compiled_weight`]) add up to `weight_bytes`. Weighed,
    /// not counted: a schema may be 256 KiB, and a thousand of those compiled would be gigabytes;
    /// a 1.1 KB schema of 20 patterns may take 5 MiB compiled (200 MB before patterns had a size
    /// limit), and weighed by its size, 5 of them kept 800 MB.
    pub fn new(weight_bytes: u64, cpu: CpuGate) -> Self {
        Self {
            validators: moka::sync::Cache::builder()
                .weigher(|_key: &String, compiled: &Arc<CompiledSchema>| compiled_weight(compiled))
                .max_capacity(weight_bytes)
                .build(),
            cpu,
            compiled: Arc::default(),
        }
    }

    /// Keeps the validators negotiation compiled for `contract` under the keys its checks look
    /// them up by (a validator kept already stays), weighed as every other: the first render,
    /// emit or action of a contract finds them instead of compiling its schemas again. Keying
    /// canonicalises each entry's schema: call it where CPU work on the contract runs. The
    /// entries' keys are not kept in `contract` (the negotiation memo holds it, weighed by its
    /// text); its props key is, beside its `propsSchemaHash`, from the same canonical form.
    pub fn adopt(&self, contract: &Contract, compiled: AgreedValidators) {
        let props = compiled.props.map(|props| (props_validator_key(contract), props));
        let entries = compiled
            .entries
            .into_iter()
            .filter_map(|(entry, validator)| Some((validator_key(contract.entry_schema(&entry)?.as_ref()), validator)));
        for (key, validator) in props.into_iter().chain(entries) {
            self.validators.entry(key).or_insert_with(|| Arc::new(validator));
        }
    }

    /// How many schemas this cache (and its clones) compiled so far.
    #[cfg(test)]
    pub(crate) fn compilations(&self) -> u64 {
        self.compiled.load(Ordering::Relaxed)
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
        let schema = schema.clone();
        self.check_keyed(
            validator_key(&schema),
            Box::new(move || compile_schema(&schema)),
            instance,
        )
        .await
    }

    /// [`SchemaCache::check`] against the props schema of `contract`, whose validator key the
    /// contract keeps: a warm render does not canonicalise its schema again.
    pub async fn check_props(&self, contract: &Contract, props: Value) -> Result<Checked, CpuBusy> {
        let held = contract.clone();
        let compile = Box::new(move || compile_schema(&held.props_schema()));
        self.check_keyed(props_validator_key(contract), compile, props).await
    }

    /// [`SchemaCache::check`] against the schema of `entry` (an action's, a channel's, a slot's),
    /// whose validator key the contract keeps, as it keeps the props schema's: an emit or an
    /// action neither canonicalises nor copies its schema again (a 135 KB `enum` took 40 ms an
    /// emit). An entry the contract does not declare is a violation; callers look it up first.
    pub async fn check_entry(
        &self,
        contract: &Contract,
        entry: EntrySchema,
        instance: Value,
    ) -> Result<Checked, CpuBusy> {
        let Some(key) = entry_validator_key(contract, &entry) else {
            return Ok(Err(Violations::one(whole_value(
                "the contract declares no schema here",
            ))));
        };
        let held = contract.clone();
        let compile = Box::new(move || match held.entry_schema(&entry) {
            Some(schema) => compile_schema(&schema),
            None => Err(SchemaCompileError::Invalid(
                "the contract declares no schema here".into(),
            )),
        });
        self.check_keyed(key, compile, instance).await
    }

    /// `key` is the validator key ([`validator_key`]) of the schema `compile` compiles; it runs
    /// only when that validator is not cached, on the blocking thread.
    async fn check_keyed(&self, key: String, compile: Compile, instance: Value) -> Result<Checked, CpuBusy> {
        if let Some(found) = self
            .validators
            .get(&key)
            .and_then(|compiled| compiled.light_violations(&instance))
        {
            return Ok(valid_or(instance, found));
        }
        // The blocking thread owns the instance and hands it back: past the deadline the caller
        // is answered while the check runs on, so it cannot borrow the caller's value.
        let cache = self.clone();
        let checking = self
            .cpu
            .start(move || {
                let found = cache.check_now(key, compile, &instance);
                (instance, found)
            })
            .await?;
        Ok(match tokio::time::timeout(SCHEMA_WORK_DEADLINE, checking).await {
            Ok(Ok((instance, found))) => valid_or(instance, found),
            Ok(Err(panicked)) => {
                tracing::error!(error = %panicked, "schema validation panicked");
                Err(Violations::one(whole_value("validation failed inside the server")))
            }
            // A validation already running cannot be interrupted; the budgets bound how long it
            // goes on, and the caller is answered now.
            Err(_) => Err(Violations::one(whole_value(&format!(
                "validation stopped: it took longer than {} s",
                SCHEMA_WORK_DEADLINE.as_secs()
            )))),
        })
    }

    fn check_now(&self, key: String, compile: Compile, instance: &Value) -> Violations {
        let compiled = self.validators.try_get_with(key, || {
            self.compiled.fetch_add(1, Ordering::Relaxed);
            compile().map(Arc::new)
        });
        match compiled {
            Ok(compiled) => compiled.violations(instance),
            Err(refused) => Violations::one(whole_value(&match refused.as_ref() {
                SchemaCompileError::OverBudget(over) => format!("the contract's schema is refused: {over}"),
                SchemaCompileError::Invalid(reason) => format!("schema does not compile: {reason}"),
            })),
        }
    }
}

/// A checked instance: itself when it is valid, or its violations (never none; at most
/// `MAX_LISTED_VIOLATIONS`, saying whether more were left out).
pub type Checked = Result<Value, Violations>;

fn valid_or(instance: Value, violations: Violations) -> Checked {
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
    async fn a_schemas_patterns_weigh_what_they_may_take_compiled() {
        let cache = SchemaCache::new(16 << 20, CpuGate::unbounded());
        // The audit's contracts: 1.1 KB of 20 patterns, each of which may take 256 KiB compiled.
        // Weighed by their size, all five were kept (800 MB in the audit, without size limits).
        for round in 0..5 {
            let props: serde_json::Map<String, Value> = (0..20)
                .map(|i| {
                    (
                        format!("p{i}"),
                        json!({ "type": "string", "pattern": format!("^{round}x{i}$") }),
                    )
                })
                .collect();
            let schema = json!({ "type": "object", "properties": props });
            assert!(cache.check(&schema, json!({})).await.unwrap().is_ok());
        }
        cache.validators.run_pending_tasks();
        assert!(cache.validators.weighted_size() <= 16 << 20);
        assert_eq!(cache.validators.entry_count(), 3, "5 MiB each");
    }

    #[tokio::test]
    async fn validators_negotiation_compiled_are_weighed_as_the_caches_own() {
        let cache = SchemaCache::new(16 << 20, CpuGate::unbounded());
        // Five contracts of 20 patterns: 5 MiB each, whoever compiled them.
        for round in 0..5 {
            let props: serde_json::Map<String, Value> = (0..20)
                .map(|i| {
                    (
                        format!("p{i}"),
                        json!({ "type": "string", "pattern": format!("^{round}x{i}$") }),
                    )
                })
                .collect();
            let draft = json!({ "propsSpec": { "type": "object", "properties": props } });
            let (agreed, compiled) = svc_domain::contract::negotiate_keeping_validators(&draft).unwrap();
            cache.adopt(&agreed.contract, compiled);
        }
        cache.validators.run_pending_tasks();
        assert!(cache.validators.weighted_size() <= 16 << 20);
        assert!((1..=3).contains(&cache.validators.entry_count()), "5 MiB each");
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
