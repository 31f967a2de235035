//! The catalog tools: gadgets, themes and the blueprint catalog (`svc_search_blueprints`,
//! `svc_list_featured_blueprints`, `svc_render_blueprint`). They read settings and the catalog
//! only, so they stay on the facade.

use svc_domain::contract::Contract;
use svc_domain::gadgets::{self, GadgetBundle, GadgetDescriptor};
use svc_domain::themes::{self, ThemeEntry};

use super::{AgentError, AgentService, AgentSettings, Caller};
use crate::services::blueprints::{BlueprintCatalog, BlueprintEntry, ManifestBundle, SearchPage};

/// Default and largest `limit` of `svc_search_blueprints`.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
pub const MAX_SEARCH_LIMIT: usize = 100;

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
    pub async fn featured_blueprints(&self, caller: &Caller) -> Vec<BlueprintEntry> {
        match &self.catalog {
            Some(c) => c.featured(&caller.app_id).await,
            None => vec![],
        }
    }

    /// `svc_render_blueprint`: `None` for an id the UI registry does not declare.
    pub fn render_blueprint(&self, blueprint_id: &str) -> Option<ManifestBundle> {
        self.catalog.as_ref()?.manifest_bundle(blueprint_id)
    }

    /// The standard package with the app's declared gadgets layered on top.
    pub fn list_gadgets(&self, caller: &Caller, app_id: Option<&str>) -> Result<Vec<GadgetDescriptor>, AgentError> {
        ensure_own_app(caller, app_id)?;
        Ok(gadgets::layer(
            gadgets::standard_package(),
            self.declared_gadgets.clone(),
        ))
    }

    /// The declared bundles a session's component may need: those of the packages its contract
    /// lets it import (the same rule the compiler applies to its imports).
    pub fn gadget_bundles(&self, contract: &Contract) -> Vec<GadgetBundle> {
        gadgets::bundles_for(&self.declared_gadgets, &contract.importable_packages())
    }

    /// `(resourceDomains, connectDomains)` additions for a mount: the declared packages a session's
    /// contract can import, or every declared package for the shell (`contract` `None`), which
    /// mounts any render.
    pub fn gadget_csp_origins(&self, contract: Option<&Contract>) -> (Vec<String>, Vec<String>) {
        match contract {
            None => gadgets::csp_origins(&self.declared_gadgets),
            Some(contract) => {
                let importable = contract.importable_packages();
                gadgets::csp_origins(self.declared_gadgets.iter().filter(|d| importable.contains(&d.package)))
            }
        }
    }

    /// The theme catalog, filtered by the app's allowlist.
    pub fn list_themes(&self, caller: &Caller, app_id: Option<&str>) -> Result<Vec<ThemeEntry>, AgentError> {
        ensure_own_app(caller, app_id)?;
        Ok(theme_catalog(&self.settings))
    }
}

/// The themes the deployment offers: the whole catalog, or its allowlist.
pub(super) fn theme_catalog(settings: &AgentSettings) -> Vec<ThemeEntry> {
    if settings.available_theme_ids.is_empty() {
        themes::catalog()
    } else {
        themes::filter_by_allowlist(themes::catalog(), &settings.available_theme_ids)
    }
}

fn ensure_own_app(caller: &Caller, app_id: Option<&str>) -> Result<(), AgentError> {
    match app_id {
        Some(id) if id != caller.app_id => Err(AgentError::AppAccessDenied),
        _ => Ok(()),
    }
}
