//! The UI registry: UIs declared by `svc.ui.json` files, compiled once at start-up, served by
//! `svc_render_blueprint`, listed by search and the featured list, and registered in the cache
//! (shared pool, generator `manifest`) so a handshake with a compatible contract can reuse them.

use serde_json::Value;
use svc_domain::blueprint::SourceKind;
use svc_domain::contract::{Contract, negotiate, sha256_hex, variant_key};
use svc_domain::session::SessionVariant;

use super::{BlueprintCatalog, BlueprintEntry, CatalogError};
use crate::ports::blueprints::{
    BlueprintFilter, BlueprintRecord, MANIFEST_GENERATOR, MCP_APPS_GENERATOR, SHARED_POOL_APP_ID,
};
use crate::ports::generation::Compiler;

/// `contentType` of `svc_render_blueprint`.
pub const MANIFEST_CONTENT_TYPE: &str = "application/javascript+react";
/// `contentType` of `svc_render_blueprint` for an `mcpApps` UI: the MCP-Apps HTML document.
pub const MCP_APPS_CONTENT_TYPE: &str = "text/html;profile=mcp-app";

/// A `svc.ui.json` as read from disk, before compiling.
#[derive(Debug, Clone)]
pub struct ManifestUiDraft {
    /// The `svc.ui.json` path, for error messages.
    pub file: String,
    pub id: String,
    pub name: String,
    pub description: String,
    pub category: String,
    pub contract: Value,
    /// The TSX of `entryPoint` (the HTML document for an `mcpApps` UI).
    pub source: String,
    pub fixture_props: Option<Value>,
    pub featured: bool,
    /// `"mount"`: `render` (a component, compiled) or `mcpApps` (an HTML document, kept as is).
    pub mount: SessionVariant,
}

/// A compiled manifest UI.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestUi {
    pub id: String,
    pub name: String,
    pub description: String,
    pub category: String,
    /// The agreed form of the declared contract.
    pub contract: Contract,
    pub fixture_props: Option<Value>,
    pub featured: bool,
    pub code: String,
    pub mount: SessionVariant,
}

impl ManifestUi {
    pub fn entry(&self) -> BlueprintEntry {
        BlueprintEntry::of_contract(
            &self.id,
            &self.name,
            &self.description,
            &self.category,
            &self.contract.as_value(),
            self.featured,
        )
    }
}

/// The `svc_render_blueprint` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestBundle {
    pub blueprint_id: String,
    pub blueprint_name: String,
    pub code: String,
    pub content_type: &'static str,
}

impl BlueprintCatalog {
    /// Compiles the manifest's UIs and makes them the UI registry (an empty list is still a
    /// registry). Each is upserted into the shared pool of the cache when it changed. Fails on the
    /// first UI that does not compile, has a contract that cannot be agreed, or repeats an id.
    pub async fn register_manifest(
        &self,
        drafts: Vec<ManifestUiDraft>,
        compiler: &dyn Compiler,
    ) -> Result<usize, CatalogError> {
        let mut uis: Vec<ManifestUi> = Vec::with_capacity(drafts.len());
        let mut files: Vec<&str> = Vec::new();
        for draft in &drafts {
            let fail = |message: String| CatalogError::Manifest {
                file: draft.file.clone(),
                message,
            };
            if let Some(at) = uis.iter().position(|u| u.id == draft.id) {
                return Err(fail(format!("id `{}` is also declared by {}", draft.id, files[at])));
            }
            let agreed = negotiate(&draft.contract)
                .map_err(|e| fail(format!("contract: {e}")))?
                .contract;
            // The same rule as a generated component's: what its contract lists
            // (`clientCapabilities.gadgets`) plus the standard package. The mount loads a declared
            // package's bundle only for a contract that lists it.
            let code = match draft.mount {
                SessionVariant::Render => {
                    compiler
                        .compile(&draft.source, &agreed.importable_packages())
                        .map_err(|e| fail(format!("entryPoint: {e}")))?
                        .code
                }
                SessionVariant::McpApps => {
                    if !is_html_document(&draft.source) {
                        return Err(fail(
                            "entryPoint: an mcpApps UI is an HTML document (it starts with <!doctype html> or <html>)"
                                .into(),
                        ));
                    }
                    draft.source.clone()
                }
            };
            uis.push(ManifestUi {
                id: draft.id.clone(),
                name: draft.name.clone(),
                description: draft.description.clone(),
                category: draft.category.clone(),
                contract: agreed,
                fixture_props: draft.fixture_props.clone(),
                featured: draft.featured,
                code,
                mount: draft.mount,
            });
            files.push(&draft.file);
        }
        for (ui, draft) in uis.iter().zip(&drafts) {
            self.register_in_cache(ui, &draft.source).await?;
        }
        self.drop_undeclared(&uis).await?;
        let count = uis.len();
        *self.inner.uis.write().unwrap_or_else(|p| p.into_inner()) = Some(uis);
        Ok(count)
    }

    async fn register_in_cache(&self, ui: &ManifestUi, source: &str) -> Result<(), CatalogError> {
        let now = self.now();
        let contract = &ui.contract;
        let variance = Value::Object(Default::default());
        let mut record = BlueprintRecord {
            blueprint_id: ui.id.clone(),
            app_id: SHARED_POOL_APP_ID.to_owned(),
            intent: ui.name.clone(),
            contract_hash: svc_domain::contract::contract_hash(contract),
            variant_key: variant_key(Some(&variance)),
            contract: ui.contract.clone(),
            variance,
            source: source.to_owned(),
            code_hash: sha256_hex(ui.code.as_bytes()),
            code: ui.code.clone(),
            generator: match ui.mount {
                SessionVariant::Render => MANIFEST_GENERATOR,
                SessionVariant::McpApps => MCP_APPS_GENERATOR,
            }
            .to_owned(),
            name: Some(ui.name.clone()),
            description: Some(ui.description.clone()),
            category: Some(ui.category.clone()),
            fixture_props: ui.fixture_props.clone(),
            featured: ui.featured,
            source_kind: SourceKind::User,
            ..BlueprintRecord::blank(now)
        };
        if let Some(stored) = self.inner.repo.get(&ui.id).await? {
            let unchanged = stored.code_hash == record.code_hash
                && stored.contract_hash == record.contract_hash
                && stored.name == record.name
                && stored.description == record.description
                && stored.category == record.category
                && stored.featured == record.featured
                && stored.fixture_props == record.fixture_props
                && stored.generator == record.generator
                && stored
                    .embedding
                    .as_ref()
                    .is_some_and(|e| e.model == self.inner.embedder.model());
            if unchanged {
                self.index_record(&stored);
                return Ok(());
            }
            record.created_at = stored.created_at;
        }
        self.embed_record(&mut record).await;
        self.inner.repo.upsert(&record).await?;
        self.index_record(&record);
        Ok(())
    }

    /// Removes from the cache the manifest UIs an earlier manifest declared and this one does not,
    /// so a UI taken out of `svc.json` stops being reused and found.
    async fn drop_undeclared(&self, uis: &[ManifestUi]) -> Result<(), CatalogError> {
        let mut declared_before = Vec::new();
        for generator in [MANIFEST_GENERATOR, MCP_APPS_GENERATOR] {
            let filter = BlueprintFilter {
                app_ids: Some(vec![SHARED_POOL_APP_ID.to_owned()]),
                generator: Some(generator.to_owned()),
                ..BlueprintFilter::default()
            };
            declared_before.extend(self.inner.repo.list(&filter).await?);
        }
        for stale in declared_before {
            if !uis.iter().any(|u| u.id == stale.blueprint_id) {
                self.inner.repo.delete(SHARED_POOL_APP_ID, &stale.blueprint_id).await?;
                self.forget(&stale.blueprint_id);
                tracing::info!(blueprint_id = %stale.blueprint_id, "manifest UI no longer declared; removed from the cache");
            }
        }
        Ok(())
    }

    /// Whether the server has a UI registry (`svc_render_blueprint` is offered).
    pub fn has_ui_registry(&self) -> bool {
        self.inner.uis.read().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    pub fn manifest_uis(&self) -> Vec<ManifestUi> {
        self.inner
            .uis
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default()
    }

    /// `svc_render_blueprint`: the compiled bundle of a manifest UI.
    pub fn manifest_bundle(&self, blueprint_id: &str) -> Option<ManifestBundle> {
        let uis = self.inner.uis.read().unwrap_or_else(|p| p.into_inner());
        uis.as_ref()?
            .iter()
            .find(|u| u.id == blueprint_id)
            .map(|u| ManifestBundle {
                blueprint_id: u.id.clone(),
                blueprint_name: u.name.clone(),
                code: u.code.clone(),
                content_type: match u.mount {
                    SessionVariant::Render => MANIFEST_CONTENT_TYPE,
                    SessionVariant::McpApps => MCP_APPS_CONTENT_TYPE,
                },
            })
    }
}

fn is_html_document(source: &str) -> bool {
    let start: String = source
        .trim_start()
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}
