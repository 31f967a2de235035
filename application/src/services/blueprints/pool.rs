//! Blueprint pools: `svc export-pool --out FILE` writes the deployment's cached blueprints;
//! `svc serve --seed-pool FILE` imports them into the shared pool, idempotently (an id already
//! stored is kept), so another server serves the same blueprintIds as cache hits. The format is
//! documented in docs/blueprints.md.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_domain::blueprint::{SourceKind, normalize_persona};
use svc_domain::contract::{Contract, contract_hash, sha256_hex, variant_key};

use super::{BlueprintCatalog, CatalogError};
use crate::ports::blueprints::{BlueprintFilter, BlueprintRecord, SHARED_POOL_APP_ID};

/// `format` of a pool file.
pub const POOL_FORMAT: &str = "svc-blueprint-pool";
/// The pool format version this server writes and reads.
pub const POOL_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolFile {
    pub format: String,
    pub version: u32,
    pub exported_at: DateTime<Utc>,
    pub blueprints: Vec<PoolBlueprint>,
}

/// One cached blueprint in a pool file. Vectors are not exported: they belong to the exporting
/// server's embedder, and the importing server computes its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolBlueprint {
    pub blueprint_id: String,
    pub intent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub contract: Value,
    pub contract_hash: String,
    pub variance: Value,
    pub variant_key: String,
    /// TSX with a default-exported React component.
    pub source: String,
    /// The compiled ES module.
    pub code: String,
    /// sha256 hex of `code`.
    pub code_hash: String,
    pub generator: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_props: Option<Value>,
    #[serde(default)]
    pub featured: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aesthetic: Option<String>,
    /// `llm` or `user`.
    pub source_kind: String,
    pub created_at: DateTime<Utc>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolImport {
    pub imported: usize,
    /// Ids already stored (a repeated import, or a blueprint of this server).
    pub kept: usize,
}

impl PoolBlueprint {
    fn of(r: BlueprintRecord) -> Self {
        Self {
            blueprint_id: r.blueprint_id,
            intent: r.intent,
            name: r.name,
            description: r.description,
            category: r.category,
            contract: r.contract.into(),
            contract_hash: r.contract_hash,
            variance: r.variance,
            variant_key: r.variant_key,
            source: r.source,
            code: r.code,
            code_hash: r.code_hash,
            generator: r.generator,
            model: r.model,
            fixture_props: r.fixture_props,
            featured: r.featured,
            persona: r.persona,
            aesthetic: r.aesthetic,
            source_kind: r.source_kind.as_str().to_owned(),
            created_at: r.created_at,
        }
    }

    /// The record to store, after checking that the hashes match what they hash.
    fn into_record(self, now: DateTime<Utc>) -> Result<BlueprintRecord, String> {
        let id = self.blueprint_id.clone();
        let fail = |what: &str| format!("blueprint {id}: {what}");
        if id.trim().is_empty() {
            return Err("a blueprint has an empty blueprintId".into());
        }
        let contract = Contract::try_from(self.contract.clone()).map_err(|e| fail(&format!("contract {e}")))?;
        if contract_hash(&contract) != self.contract_hash {
            return Err(fail("contractHash does not match its contract"));
        }
        if !self.variance.is_object() || variant_key(Some(&self.variance)) != self.variant_key {
            return Err(fail("variantKey does not match its variance"));
        }
        if sha256_hex(self.code.as_bytes()) != self.code_hash {
            return Err(fail("codeHash does not match its code"));
        }
        let source_kind =
            SourceKind::parse(&self.source_kind).ok_or_else(|| fail("sourceKind must be `llm` or `user`"))?;
        Ok(BlueprintRecord {
            blueprint_id: self.blueprint_id,
            app_id: SHARED_POOL_APP_ID.to_owned(),
            intent: self.intent,
            contract_hash: self.contract_hash,
            variant_key: self.variant_key,
            contract,
            variance: self.variance,
            source: self.source,
            code: self.code,
            code_hash: self.code_hash,
            generator: self.generator,
            model: self.model,
            created_at: self.created_at,
            name: self.name,
            description: self.description,
            category: self.category,
            fixture_props: self.fixture_props,
            embedding: None,
            featured: self.featured,
            persona: self.persona.as_deref().and_then(normalize_persona),
            aesthetic: self.aesthetic,
            is_operator_default: false,
            source_kind,
            updated_at: now,
        })
    }
}

impl BlueprintCatalog {
    /// Every cached blueprint of the deployment except the manifest's UIs, oldest first.
    pub async fn export_pool(&self) -> Result<PoolFile, CatalogError> {
        let filter = BlueprintFilter {
            exclude_manifest: true,
            ..BlueprintFilter::default()
        };
        let records = self.inner.repo.list(&filter).await?;
        Ok(PoolFile {
            format: POOL_FORMAT.to_owned(),
            version: POOL_VERSION,
            exported_at: self.now(),
            blueprints: records.into_iter().map(PoolBlueprint::of).collect(),
        })
    }

    /// Imports a pool into the shared pool; every blueprint is checked before any is stored.
    pub async fn import_pool(&self, pool: PoolFile) -> Result<PoolImport, CatalogError> {
        if pool.format != POOL_FORMAT {
            return Err(CatalogError::Pool(format!(
                "format is `{}`, expected `{POOL_FORMAT}`",
                pool.format
            )));
        }
        if pool.version != POOL_VERSION {
            return Err(CatalogError::Pool(format!(
                "version {} is not supported (this server reads version {POOL_VERSION})",
                pool.version
            )));
        }
        let now = self.now();
        let records = pool
            .blueprints
            .into_iter()
            .map(|b| b.into_record(now))
            .collect::<Result<Vec<_>, _>>()
            .map_err(CatalogError::Pool)?;
        let mut report = PoolImport::default();
        for record in records {
            if self.store_if_absent(record).await? {
                report.imported += 1;
            } else {
                report.kept += 1;
            }
        }
        Ok(report)
    }
}
