//! The blueprints domain of `/ops` (Document 3): generate through the generator port, register
//! as given, list with AND-composed filters (persona and intent keywords by meaning), update the
//! operator default and the variance, delete. Blueprints belong to the caller's app; another
//! app's blueprint answers exactly like a missing one. The listing is in [`listing`].

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use svc_domain::blueprint::app_capacity::{APP_BLUEPRINTS_MAX, AppBlueprintsFull, check_room};
use svc_domain::blueprint::listing_page::InvalidBlueprintPageLimit;
use svc_domain::blueprint::operator_texts::{OperatorText, OperatorTextTooLong};
use svc_domain::blueprint::variance_patch::{VarianceTooLarge, check_merged};
use svc_domain::blueprint::{SourceKind, normalize_persona};
use svc_domain::budget::BudgetExceeded;
use svc_domain::contract::{Contract, check_contract_budgets, contract_hash, negotiate, sha256_hex, variant_key};
use svc_domain::text::excerpt;

use super::INTERNAL_ERROR_CODE;
use crate::ports::blueprints::{BlueprintChange, BlueprintRecord, BlueprintRepository};
use crate::ports::generation::{CompileFailure, Compiler, GenerationError, GenerationRequest, Generator};
use crate::ports::{Clock, Ids, RepositoryError};
use crate::services::agent::GenerationQueue;
use crate::services::blueprints::{BlueprintCatalog, Bounded, CatalogError};
use crate::services::compile::{compile_off_worker, module_of};
use crate::services::cpu_gate::{CpuBusy, CpuGate, CpuWorkError};

mod listing;
mod listing_cursor;

pub use listing::{BlueprintPage, ListBlueprints};

/// The `generator` of registered blueprints: `svc_ops_list_blueprints` filters them with it.
pub const REGISTERED_GENERATOR: &str = "user";

/// Cosine from which a stored persona counts as "the same audience" as a `persona` filter.
/// Exact (normalised) equality always matches.
pub const PERSONA_MATCH_THRESHOLD: f64 = 0.5;

/// Cosine from which a blueprint's intent and description match `intentKeywords`.
pub const KEYWORDS_MATCH_THRESHOLD: f64 = 0.2;

#[derive(Debug, thiserror::Error)]
pub enum OpsBlueprintError {
    /// The contract cannot be agreed; the findings say why.
    #[error("contract: {0}")]
    InvalidContract(String),
    /// The contract is over a complexity budget (docs/budgets.md).
    #[error("{0}")]
    ContractOverBudget(BudgetExceeded),
    /// The component code is over a complexity budget (docs/budgets.md).
    #[error("{0}")]
    ComponentOverBudget(BudgetExceeded),
    #[error("no generator is called `{}`", excerpt(.0))]
    GeneratorNotFound(String),
    #[error("no provider key for this generation: {0} (fix: set a provider key)")]
    MissingCredentials(String),
    /// The generator or the compiler produced nothing usable.
    #[error("generation failed: {0}")]
    GenerationFailed(String),
    #[error("no blueprint {} in this app", excerpt(.0))]
    BlueprintNotFound(String),
    /// `persona`, `aesthetic`, `context` or `seedPrompt` over its cap.
    #[error(transparent)]
    TextTooLong(#[from] OperatorTextTooLong),
    /// The app holds as many blueprints as `/ops` may store in it.
    #[error(transparent)]
    AppFull(#[from] AppBlueprintsFull),
    /// The merged variance of `svc_ops_update_blueprint` over its field count.
    #[error(transparent)]
    VarianceTooLarge(#[from] VarianceTooLarge),
    #[error(transparent)]
    InvalidLimit(#[from] InvalidBlueprintPageLimit),
    #[error("not a cursor of this listing")]
    InvalidCursor,
    /// The generation queue (shared with the agent's renders) or the provider is saturated.
    #[error("generation is overloaded; retry after {retry_after_seconds} s")]
    Overloaded { retry_after_seconds: u64 },
    /// No CPU slot freed in time for the contract's negotiation or the code's compilation.
    #[error(transparent)]
    Busy(#[from] CpuBusy),
    #[error(transparent)]
    Storage(#[from] RepositoryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

impl OpsBlueprintError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidContract(_) => "invalid_contract",
            Self::ContractOverBudget(_) => "contract_over_budget",
            Self::ComponentOverBudget(_) => "component_over_budget",
            Self::GeneratorNotFound(_) => "generator_not_found",
            Self::MissingCredentials(_) => "missing_credentials",
            Self::GenerationFailed(_) => "generation_failed",
            Self::BlueprintNotFound(_) => "blueprint_not_found",
            Self::TextTooLong(_) => "text_too_long",
            Self::AppFull(_) => "blueprint_limit_reached",
            Self::VarianceTooLarge(_) => "variance_too_large",
            Self::InvalidLimit(_) => "invalid_limit",
            Self::InvalidCursor => "invalid_cursor",
            Self::Overloaded { .. } => "generation_overloaded",
            Self::Busy(_) => "server_busy",
            Self::Storage(_) | Self::Catalog(_) => INTERNAL_ERROR_CODE,
        }
    }
}

/// The model `source.model` names: the language model that wrote the component, or, for a
/// generator without one (the built-in generator), the generator itself.
pub fn source_model(generator: &str, model: Option<&str>) -> String {
    model.unwrap_or(generator).to_owned()
}

/// Fields generate and register share.
#[derive(Debug, Clone, Default)]
pub struct BlueprintOptions {
    pub generator: Option<String>,
    pub persona: Option<String>,
    pub aesthetic: Option<String>,
    pub context: Option<String>,
    pub seed_prompt: Option<String>,
    pub set_as_operator_default: bool,
    /// Hosted: the caller the generation runs for. It uses the provider keys of that caller's
    /// payer, by the rule a render's generation follows (an org app's are the org's).
    pub for_caller: Option<crate::services::agent::Caller>,
}

impl BlueprintOptions {
    /// Every text within its cap (`svc_domain::blueprint::operator_texts`).
    fn check_texts(&self) -> Result<(), OperatorTextTooLong> {
        for (field, text) in [
            (OperatorText::Persona, &self.persona),
            (OperatorText::Aesthetic, &self.aesthetic),
            (OperatorText::Context, &self.context),
            (OperatorText::SeedPrompt, &self.seed_prompt),
        ] {
            text.as_deref().map_or(Ok(()), |text| field.check(text))?;
        }
        Ok(())
    }
}

/// What `svc_ops_generate_blueprint` and `svc_ops_register_blueprint` answer.
#[derive(Debug, Clone)]
pub struct StoredBlueprint {
    pub record: BlueprintRecord,
    pub validator_score: Option<f64>,
}

/// `svc_ops_update_blueprint`.
#[derive(Debug, Clone, Default)]
pub struct UpdateBlueprint {
    pub blueprint_id: String,
    pub make_operator_default: bool,
    /// Merged into the stored variance; an empty string removes the field.
    pub variance: Option<Map<String, Value>>,
}

#[derive(Clone)]
pub struct OpsBlueprintService {
    catalog: BlueprintCatalog,
    repository: Arc<dyn BlueprintRepository>,
    generator: Arc<dyn Generator>,
    queue: GenerationQueue,
    compiler: Arc<dyn Compiler>,
    cpu: CpuGate,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// Hosted: generations use their payer's provider keys.
    provider_keys: Option<crate::services::hosted::ProviderKeyService>,
    /// Hosted: who pays for a caller's generation (its app's org, ...); `None`: the caller.
    payers: Option<crate::services::hosted::AppPayers>,
}

/// The ports the blueprints domain uses.
pub struct OpsBlueprintPorts {
    pub catalog: BlueprintCatalog,
    pub repository: Arc<dyn BlueprintRepository>,
    pub generator: Arc<dyn Generator>,
    /// The deployment's generation queue, so operator generations count against the same bound
    /// as renders.
    pub queue: GenerationQueue,
    pub compiler: Arc<dyn Compiler>,
    /// Bounds negotiation and compilation with the deployment's other CPU-heavy work.
    pub cpu: CpuGate,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
}

impl OpsBlueprintService {
    pub fn new(ports: OpsBlueprintPorts) -> Self {
        Self {
            catalog: ports.catalog,
            repository: ports.repository,
            generator: ports.generator,
            queue: ports.queue,
            compiler: ports.compiler,
            cpu: ports.cpu,
            clock: ports.clock,
            ids: ports.ids,
            provider_keys: None,
            payers: None,
        }
    }

    /// Hosted mode: a generation uses its payer's provider keys and never the deployment's.
    pub fn with_provider_keys(mut self, keys: crate::services::hosted::ProviderKeyService) -> Self {
        self.provider_keys = Some(keys);
        self
    }

    /// Hosted mode: the payer of a caller's generation is found as a render's is (an org app's
    /// generations use the org's keys, never the caller's own).
    pub fn with_app_payers(mut self, payers: crate::services::hosted::AppPayers) -> Self {
        self.payers = Some(payers);
        self
    }

    /// Whose provider keys a generation for `caller` uses.
    async fn payer(
        &self,
        caller: &crate::services::agent::Caller,
    ) -> Result<svc_domain::wallet::Principal, RepositoryError> {
        match &self.payers {
            Some(payers) => payers.payer(caller).await,
            None => Ok(crate::services::hosted::payer_of(caller)),
        }
    }

    /// Generates a component for `contract` in `app_id`, compiles it and stores it.
    pub async fn generate(
        &self,
        app_id: &str,
        contract: Value,
        options: BlueprintOptions,
    ) -> Result<StoredBlueprint, OpsBlueprintError> {
        self.admit(app_id, &options).await?;
        // Negotiation compiles every schema of the contract: CPU work on untrusted input, so it
        // runs on a blocking thread through the CPU gate.
        let contract = match self.cpu.run(move || agreed(&contract)).await {
            Ok(agreed) => agreed?,
            Err(CpuWorkError::Busy(busy)) => return Err(busy.into()),
            Err(panicked) => {
                return Err(OpsBlueprintError::GenerationFailed(format!(
                    "negotiation failed: {panicked}"
                )));
            }
        };
        let intent = options.context.clone().unwrap_or_default();
        let hosted_owner = match (&self.provider_keys, &options.for_caller) {
            (Some(keys), Some(caller)) => Some((keys, self.payer(caller).await?)),
            _ => None,
        };
        let caller_keys = match &hosted_owner {
            Some((keys, owner)) => Some(
                keys.caller_keys(owner)
                    .await
                    .map_err(|e| OpsBlueprintError::GenerationFailed(format!("cannot open the provider keys: {e}")))?,
            ),
            None => None,
        };
        let request = GenerationRequest {
            caller_keys,
            generator: options.generator.clone(),
            aesthetic: options.aesthetic.clone(),
            context: options.context.clone(),
            seed_prompt: options.seed_prompt.clone(),
            ..GenerationRequest::new(intent, contract.clone())
        }
        .with_persona(options.persona.as_deref());
        let principal = options.for_caller.as_ref().map_or(app_id, |caller| caller.principal());
        let slot = self
            .queue
            .enter(principal)
            .await
            .map_err(|full| OpsBlueprintError::Overloaded {
                retry_after_seconds: full.retry_after_seconds,
            })?;
        let generated = self.generator.generate(&request).await.map_err(generation_error)?;
        drop(slot);
        if let (Some((keys, owner)), Some(model)) = (&hosted_owner, generated.model.as_deref()) {
            let provider = model.split([':', '/']).next().unwrap_or_default();
            if let Err(error) = keys.touch(owner, provider).await {
                tracing::warn!(error = %error, "could not record the provider key's lastUsedAt");
            }
        }
        let compiled = module_of(&self.cpu, &self.compiler, &generated, &contract.importable_packages())
            .await
            .map_err(|failure| OpsBlueprintError::GenerationFailed(failure.to_string()))?;
        let record = BlueprintRecord {
            source: generated.source,
            code_hash: sha256_hex(compiled.code.as_bytes()),
            code: compiled.code,
            generator: generated.generator,
            model: generated.model,
            source_kind: SourceKind::Llm,
            intent: options.context.clone().unwrap_or_default(),
            ..self.draft(app_id, &contract, &options)
        };
        let record = self.store(record, options.set_as_operator_default).await?;
        Ok(StoredBlueprint {
            record,
            validator_score: generated.validator_score,
        })
    }

    /// Stores `component_code` as given: nothing is generated or validated. A component that
    /// compiles keeps its compiled module (content-addressed by `codeHash`, as generated ones);
    /// one that does not is kept with no module (its `codeHash` is then that of the code as
    /// given) and is never served.
    pub async fn register(
        &self,
        app_id: &str,
        contract: Value,
        component_code: String,
        options: BlueprintOptions,
    ) -> Result<StoredBlueprint, OpsBlueprintError> {
        self.admit(app_id, &options).await?;
        check_contract_budgets(&contract).map_err(OpsBlueprintError::ContractOverBudget)?;
        // Registered as given (never negotiated), but it must be an object.
        let contract = Contract::try_from(contract).map_err(|e| OpsBlueprintError::InvalidContract(e.to_string()))?;
        let (code, code_hash) = match compile_off_worker(
            &self.cpu,
            &self.compiler,
            &component_code,
            &contract.importable_packages(),
        )
        .await?
        {
            Ok(compiled) => {
                let hash = sha256_hex(compiled.code.as_bytes());
                (compiled.code, hash)
            }
            // Code that does not compile is kept (and never served); code over a budget is not.
            Err(CompileFailure {
                over_budget: Some(over),
                ..
            }) => return Err(OpsBlueprintError::ComponentOverBudget(over)),
            Err(_) => (String::new(), sha256_hex(component_code.as_bytes())),
        };
        let record = BlueprintRecord {
            code_hash,
            code,
            source: component_code,
            generator: REGISTERED_GENERATOR.to_owned(),
            source_kind: SourceKind::User,
            ..self.draft(app_id, &contract, &options)
        };
        let record = self.store(record, options.set_as_operator_default).await?;
        Ok(StoredBlueprint {
            record,
            validator_score: None,
        })
    }

    /// What every operator write checks before any work: the texts' caps, then the app's room.
    /// The room is checked again where the blueprint is stored, with the insert, so concurrent
    /// writes never pass the cap together; this first look spares a full app a generation.
    async fn admit(&self, app_id: &str, options: &BlueprintOptions) -> Result<(), OpsBlueprintError> {
        options.check_texts()?;
        check_room(self.repository.count_in_app(app_id).await?)?;
        Ok(())
    }

    fn draft(&self, app_id: &str, contract: &Contract, options: &BlueprintOptions) -> BlueprintRecord {
        let context = options.context.clone().filter(|c| !c.trim().is_empty());
        BlueprintRecord {
            blueprint_id: self.ids.uuid(),
            app_id: app_id.to_owned(),
            contract_hash: contract_hash(contract),
            variant_key: variant_key(None),
            contract: contract.clone(),
            description: context,
            persona: options.persona.as_deref().and_then(normalize_persona),
            aesthetic: options.aesthetic.clone().filter(|a| !a.trim().is_empty()),
            ..BlueprintRecord::blank(self.clock.now())
        }
    }

    async fn store(
        &self,
        record: BlueprintRecord,
        operator_default: bool,
    ) -> Result<BlueprintRecord, OpsBlueprintError> {
        let mut record = match self.catalog.store_bounded(record, APP_BLUEPRINTS_MAX).await? {
            Bounded::Stored(record) => *record,
            Bounded::Full { stored } => return Err(AppBlueprintsFull { stored }.into()),
        };
        if operator_default {
            let change = BlueprintChange {
                is_operator_default: Some(true),
                ..BlueprintChange::default()
            };
            let now = self.clock.now();
            self.repository
                .update(&record.app_id, &record.blueprint_id, &change, now)
                .await?;
            record.is_operator_default = true;
            record.updated_at = now;
        }
        Ok(record)
    }

    /// One of the app's blueprints (another app's answers as an unknown one).
    pub async fn get(&self, app_id: &str, blueprint_id: &str) -> Result<BlueprintRecord, OpsBlueprintError> {
        self.repository
            .get(blueprint_id)
            .await?
            .filter(|b| b.app_id == app_id)
            .map(Arc::unwrap_or_clone)
            .ok_or_else(|| OpsBlueprintError::BlueprintNotFound(blueprint_id.to_owned()))
    }

    /// Applies the operator's change; the updated time.
    pub async fn update(&self, app_id: &str, command: UpdateBlueprint) -> Result<DateTime<Utc>, OpsBlueprintError> {
        let not_found = || OpsBlueprintError::BlueprintNotFound(command.blueprint_id.clone());
        let current = self
            .repository
            .get(&command.blueprint_id)
            .await?
            .filter(|b| b.app_id == app_id)
            .ok_or_else(not_found)?;
        let variance = match command.variance.as_ref() {
            Some(patch) => {
                let merged = merge_variance(&current.variance, patch);
                // A patch is bounded by the schema; patches add up, so the merged one is too.
                check_merged(merged.as_object().map_or(0, Map::len))?;
                let key = variant_key(Some(&merged));
                Some((merged, key))
            }
            None => None,
        };
        let change = BlueprintChange {
            variance,
            is_operator_default: command.make_operator_default.then_some(true),
        };
        let now = self.clock.now();
        if !self
            .repository
            .update(app_id, &command.blueprint_id, &change, now)
            .await?
        {
            return Err(not_found());
        }
        self.catalog.reindex(&command.blueprint_id).await?;
        Ok(now)
    }

    /// Deletes the app's blueprint; a missing or foreign one is left alone, and answers the same.
    pub async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<(), OpsBlueprintError> {
        if self.repository.delete(app_id, blueprint_id).await? {
            self.catalog.forget(blueprint_id);
        }
        Ok(())
    }
}

fn agreed(contract: &Value) -> Result<Contract, OpsBlueprintError> {
    check_contract_budgets(contract).map_err(OpsBlueprintError::ContractOverBudget)?;
    negotiate(contract).map(|n| n.contract).map_err(|declined| {
        let findings: Vec<String> = declined
            .findings
            .iter()
            .map(|f| format!("{} {}", f.path, f.message))
            .collect();
        OpsBlueprintError::InvalidContract(findings.join("; "))
    })
}

fn generation_error(error: GenerationError) -> OpsBlueprintError {
    match error {
        GenerationError::Overloaded {
            retry_after_seconds, ..
        } => OpsBlueprintError::Overloaded {
            retry_after_seconds: retry_after_seconds.unwrap_or(1),
        },
        GenerationError::GeneratorNotFound(slug) => OpsBlueprintError::GeneratorNotFound(slug),
        GenerationError::NoCredentials(provider) | GenerationError::NoPlatformKey(provider) => {
            OpsBlueprintError::MissingCredentials(provider)
        }
        other => OpsBlueprintError::GenerationFailed(other.to_string()),
    }
}

/// Document 3's partial variance merge: each field of `patch` replaces the stored one, and a
/// field set to an empty string is removed.
fn merge_variance(stored: &Value, patch: &Map<String, Value>) -> Value {
    let mut merged = stored.as_object().cloned().unwrap_or_default();
    for (field, value) in patch {
        if value.as_str() == Some("") {
            merged.shift_remove(field);
        } else {
            merged.insert(field.clone(), value.clone());
        }
    }
    Value::Object(merged)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merge_variance;

    #[test]
    fn a_variance_patch_replaces_adds_and_clears_with_an_empty_string() {
        let stored = json!({ "density": "compact", "tone": "formal" });
        let patch = json!({ "density": "roomy", "layout": "grid", "tone": "" });
        let merged = merge_variance(&stored, patch.as_object().unwrap());
        assert_eq!(merged, json!({ "density": "roomy", "layout": "grid" }));
        assert_eq!(merge_variance(&json!(null), &Default::default()), json!({}));
    }
}

#[cfg(all(test, feature = "testing"))]
mod limits_tests;

#[cfg(all(test, feature = "testing"))]
mod payer_tests;

#[cfg(all(test, feature = "testing"))]
mod register_tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::services::blueprints::CatalogSettings;
    use crate::testing::{AgentFakes, FlatEmbedder};

    pub(super) fn service(fakes: &AgentFakes) -> OpsBlueprintService {
        OpsBlueprintService::new(OpsBlueprintPorts {
            catalog: BlueprintCatalog::new(
                fakes.store.clone(),
                Arc::new(FlatEmbedder),
                fakes.clock.clone(),
                CatalogSettings::default(),
            ),
            repository: fakes.store.clone(),
            generator: fakes.generator.clone(),
            queue: GenerationQueue::new(1, 1, Duration::from_secs(1)),
            compiler: fakes.compiler.clone(),
            cpu: CpuGate::unbounded(),
            clock: fakes.clock.clone(),
            ids: fakes.ids.clone(),
        })
    }

    #[tokio::test]
    async fn a_registered_contract_that_is_not_an_object_is_an_invalid_contract_not_an_empty_one() {
        let fakes = AgentFakes::default();
        let code = "export default function Card() { return null; }".to_owned();
        let error = service(&fakes)
            .register("app-1", json!(["propsSpec"]), code.clone(), BlueprintOptions::default())
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_contract");
        assert_eq!(error.to_string(), "contract: must be a JSON object");
        assert!(fakes.store.blueprints().is_empty());

        let stored = service(&fakes)
            .register("app-1", json!({}), code, BlueprintOptions::default())
            .await
            .unwrap();
        assert_eq!(stored.record.contract.as_value(), json!({}));
    }
}
