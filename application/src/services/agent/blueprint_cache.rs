//! How the agent plane uses the blueprint catalog: storing what it generates, the handshake's
//! semantic lookup, and the catalog tools (`svc_search_blueprints`,
//! `svc_list_featured_blueprints`, `svc_render_blueprint`).

use svc_domain::gadgets::GadgetDescriptor;

use super::{AgentError, AgentService, Caller};
use crate::ports::agent::{BlueprintRecord, CacheMatch};
use crate::services::blueprints::{BlueprintCatalog, BlueprintEntry, CatalogError, ManifestBundle, SearchPage};

/// Default and largest `limit` of `svc_search_blueprints`.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
pub const MAX_SEARCH_LIMIT: usize = 100;

impl From<CatalogError> for AgentError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::Repository(e) => e.into(),
            other => Self::Internal(anyhow::Error::new(other)),
        }
    }
}

impl AgentService {
    /// Wires the blueprint catalog (semantic lookup, search, the UI registry).
    pub fn with_catalog(mut self, catalog: BlueprintCatalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// The gadgets of `svc.json#app.gadgets`, layered over the standard package.
    pub fn with_declared_gadgets(mut self, gadgets: Vec<GadgetDescriptor>) -> Self {
        self.declared_gadgets = gadgets;
        self
    }

    pub fn catalog(&self) -> Option<&BlueprintCatalog> {
        self.catalog.as_ref()
    }

    /// Whether `svc_render_blueprint` is offered.
    pub fn has_ui_registry(&self) -> bool {
        self.catalog.as_ref().is_some_and(BlueprintCatalog::has_ui_registry)
    }

    /// Stores a generated blueprint (with its vector, when a catalog is wired).
    pub(super) async fn store_blueprint(&self, record: &BlueprintRecord) -> Result<(), AgentError> {
        match &self.catalog {
            Some(catalog) => {
                catalog.store(record.clone()).await?;
            }
            None => self.ports.blueprints.insert(record).await?,
        }
        Ok(())
    }

    /// A cached blueprint for a different intent with the same contract and variance, similar
    /// enough to reuse.
    pub(super) async fn semantic_cache_match(
        &self,
        caller: &Caller,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<CacheMatch>, AgentError> {
        let Some(catalog) = &self.catalog else {
            return Ok(None);
        };
        let found = catalog
            .semantic_match(&caller.app_id, intent, contract_hash, variant_key)
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

    /// `svc_search_blueprints`; `limit` defaults to 10 and must be 1 to 100.
    pub async fn search_blueprints(
        &self,
        caller: &Caller,
        query: &str,
        limit: Option<u64>,
    ) -> Result<SearchPage, AgentError> {
        let limit = match limit {
            None => DEFAULT_SEARCH_LIMIT,
            Some(n) if (1..=MAX_SEARCH_LIMIT as u64).contains(&n) => n as usize,
            Some(_) => {
                return Err(AgentError::invalid(
                    "limit",
                    format!("must be an integer from 1 to {MAX_SEARCH_LIMIT}"),
                ));
            }
        };
        match &self.catalog {
            Some(catalog) => Ok(catalog.search(&caller.app_id, query, limit).await?),
            None => Ok(SearchPage { rows: vec![], total: 0 }),
        }
    }

    /// `svc_list_featured_blueprints`: empty when no catalog is wired.
    pub fn featured_blueprints(&self, caller: &Caller) -> Vec<BlueprintEntry> {
        self.catalog
            .as_ref()
            .map(|c| c.featured(&caller.app_id))
            .unwrap_or_default()
    }

    /// `svc_render_blueprint`: `None` for an id the UI registry does not declare.
    pub fn render_blueprint(&self, blueprint_id: &str) -> Option<ManifestBundle> {
        self.catalog.as_ref()?.manifest_bundle(blueprint_id)
    }
}
