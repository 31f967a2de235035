//! How the agent plane uses stored blueprints: storing what it generates, and the handshake's
//! reuse lookups beyond the exact key (the operator's default, then a semantic match).

use std::sync::Arc;

use super::AgentError;
use crate::ports::agent::{BlueprintRecord, BlueprintRepository, CacheMatch};
use crate::services::blueprints::{BlueprintCatalog, CatalogError};

impl From<CatalogError> for AgentError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::Repository(e) => e.into(),
            other => Self::Internal(anyhow::Error::new(other)),
        }
    }
}

/// The blueprint repository, with the catalog (vectors, semantic lookup) when one is wired.
#[derive(Clone)]
pub struct CachedBlueprints {
    pub(super) repository: Arc<dyn BlueprintRepository>,
    pub(super) catalog: Option<BlueprintCatalog>,
}

impl CachedBlueprints {
    pub fn new(repository: Arc<dyn BlueprintRepository>, catalog: Option<BlueprintCatalog>) -> Self {
        Self { repository, catalog }
    }

    /// Stores a generated blueprint (with its vector, when a catalog is wired).
    pub async fn store(&self, record: &BlueprintRecord) -> Result<(), AgentError> {
        match &self.catalog {
            Some(catalog) => {
                catalog.store(record.clone()).await?;
            }
            None => self.repository.insert(record).await?,
        }
        Ok(())
    }

    /// A cached blueprint for a different intent with the same contract and variance, similar
    /// enough to reuse. Without a catalog the cache matches exactly only.
    pub async fn semantic_match(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<CacheMatch>, AgentError> {
        let Some(catalog) = &self.catalog else {
            return Ok(None);
        };
        let found = catalog
            .semantic_match(app_id, intent, contract_hash, variant_key)
            .await?;
        Ok(found.map(|m| CacheMatch {
            reason: format!(
                "intent is {:.2} similar to the cached \"{}\" (threshold {:.2}) with the same contractHash and variantKey",
                m.similarity,
                m.cached_intent,
                catalog.settings().semantic_threshold
            ),
            blueprint_id: m.blueprint_id,
            similarity: m.similarity,
            kind: "semantic".into(),
        }))
    }

    /// The app's operator default for this contractHash (there is at most one, whatever its
    /// variance), when it can be served: a registered component that does not compile never is.
    /// Set by `svc_ops_register_blueprint` / `_generate_blueprint` with `setAsOperatorDefault`,
    /// or `svc_ops_update_blueprint` with `isOperatorDefault: true`.
    pub async fn operator_default(&self, app_id: &str, contract_hash: &str) -> Result<Option<CacheMatch>, AgentError> {
        // Chosen by its flags: no blueprint of the contract is read whole (an app may hold
        // thousands of them, each with its code); the render reads the chosen one by id.
        let Some(blueprint_id) = self.repository.operator_default_id(app_id, contract_hash).await? else {
            return Ok(None);
        };
        Ok(Some(CacheMatch {
            blueprint_id,
            similarity: 1.0,
            kind: "operator_default".into(),
            reason: "the operator's default blueprint for this contractHash".into(),
        }))
    }
}
