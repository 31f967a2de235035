//! Ports of the blueprint cache: the repository of materialised components and the embedder
//! that turns intents and descriptions into vectors for semantic lookup.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::blueprint::SourceKind;
use svc_domain::contract::Contract;

use super::{BoundedInsert, RepositoryError};

type Result<T> = std::result::Result<T, RepositoryError>;

/// The app id of blueprints every app of the deployment may reuse: components imported with
/// `svc serve --seed-pool` and the manifest's UIs. Real app ids are base62, so never this.
pub const SHARED_POOL_APP_ID: &str = "_pool";

/// Generator slug of the blueprints registered from the manifest's `svc.ui.json` files.
pub const MANIFEST_GENERATOR: &str = "manifest";

/// Generator slug of manifest UIs declared with `"mount": "mcpApps"`: an MCP-Apps HTML document
/// stored as is (`source` and `code`); a render of one is an `mcpApps` session.
pub const MCP_APPS_GENERATOR: &str = "manifest-mcp-apps";

/// A stored embedding and the embedder that made it; a vector of another model is recomputed
/// when the index is rebuilt.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEmbedding {
    pub model: String,
    pub vector: Vec<f32>,
}

/// A materialised component in the blueprint cache.
#[derive(Debug, Clone, PartialEq)]
pub struct BlueprintRecord {
    pub blueprint_id: String,
    /// The owning app, or [`SHARED_POOL_APP_ID`].
    pub app_id: String,
    pub intent: String,
    pub contract_hash: String,
    pub variant_key: String,
    /// Parsed once where it is read back (a stored non-object is refused there).
    pub contract: Contract,
    pub variance: Value,
    pub source: String,
    pub code: String,
    /// sha256 hex of `code`: the compiled module is content-addressed by it.
    pub code_hash: String,
    pub generator: String,
    pub model: Option<String>,
    pub created_at: DateTime<Utc>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    /// Example props the component renders with (`svc_get_render_source`'s `fixtureProps` shape).
    pub fixture_props: Option<Value>,
    pub embedding: Option<StoredEmbedding>,
    pub featured: bool,
    /// Normalised with `svc_domain::blueprint::normalize_persona`.
    pub persona: Option<String>,
    pub aesthetic: Option<String>,
    pub is_operator_default: bool,
    pub source_kind: SourceKind,
    pub updated_at: DateTime<Utc>,
}

impl BlueprintRecord {
    /// The variant of a session rendered from this blueprint.
    pub fn session_variant(&self) -> svc_domain::session::SessionVariant {
        if self.generator == MCP_APPS_GENERATOR {
            svc_domain::session::SessionVariant::McpApps
        } else {
            svc_domain::session::SessionVariant::Render
        }
    }

    /// Whether the blueprint has a compiled module a render can serve. A component registered by
    /// an operator that does not compile is kept as given, with no module, and never served.
    pub fn is_servable(&self) -> bool {
        !self.code.is_empty()
    }

    /// The text the embedder sees: name, intent and description, without repeats.
    pub fn embedding_text(&self) -> String {
        embedding_text(self.name.as_deref(), &self.intent, self.description.as_deref())
    }
}

/// The text embedded for a blueprint: its distinct name, intent and description.
pub fn embedding_text(name: Option<&str>, intent: &str, description: Option<&str>) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in [name, Some(intent), description].into_iter().flatten() {
        let part = part.trim();
        if !part.is_empty() && !parts.iter().any(|p| p.eq_ignore_ascii_case(part)) {
            parts.push(part);
        }
    }
    parts.join(". ")
}

/// Characters of each text of a [`BlueprintSummary`] (intent, name, description, persona) a
/// repository reads: what the embedder reads of a blueprint's text, so a row stored long before
/// the operator's caps costs an index rebuild no more than a new one.
pub const SUMMARY_TEXT_MAX_CHARS: usize = crate::services::blueprints::EMBEDDED_TEXT_MAX_CHARS;

/// What the in-memory index is built from (no source or code; texts up to
/// [`SUMMARY_TEXT_MAX_CHARS`] characters).
#[derive(Debug, Clone, PartialEq)]
pub struct BlueprintSummary {
    pub blueprint_id: String,
    pub app_id: String,
    pub intent: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    pub contract_hash: String,
    pub variant_key: String,
    pub contract: Value,
    pub generator: String,
    pub featured: bool,
    pub persona: Option<String>,
    pub embedding: Option<StoredEmbedding>,
    pub updated_at: DateTime<Utc>,
}

impl BlueprintSummary {
    pub fn embedding_text(&self) -> String {
        embedding_text(self.name.as_deref(), &self.intent, self.description.as_deref())
    }
}

/// Filters of a blueprint listing; they AND-compose, `None` matches everything.
#[derive(Debug, Clone, Default)]
pub struct BlueprintFilter {
    /// Rows of these apps only (include [`SHARED_POOL_APP_ID`] to see the shared pool).
    pub app_ids: Option<Vec<String>>,
    pub contract_hash: Option<String>,
    pub generator: Option<String>,
    /// Compared with the normalised persona.
    pub persona: Option<String>,
    pub featured_only: bool,
    /// Leave out the manifest's UIs (what `svc export-pool` writes).
    pub exclude_manifest: bool,
}

/// A blueprint as `svc_ops_list_blueprints` shows it: no source, no compiled code, no vector.
#[derive(Debug, Clone, PartialEq)]
pub struct BlueprintListing {
    pub blueprint_id: String,
    pub intent: String,
    pub contract_hash: String,
    pub variant_key: String,
    pub contract: Contract,
    pub variance: Value,
    pub code_hash: String,
    pub generator: String,
    pub model: Option<String>,
    pub source_kind: SourceKind,
    pub description: Option<String>,
    pub persona: Option<String>,
    pub aesthetic: Option<String>,
    pub fixture_props: Option<Value>,
    pub is_operator_default: bool,
    /// A compiled module is stored ([`BlueprintRecord::is_servable`]).
    pub servable: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl BlueprintListing {
    /// Where this row is in the listing's order.
    pub fn position(&self) -> ListingPosition {
        ListingPosition {
            created_at: self.created_at,
            blueprint_id: self.blueprint_id.clone(),
        }
    }
}

/// A row's place in a listing: oldest first, equal times by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingPosition {
    pub created_at: DateTime<Utc>,
    pub blueprint_id: String,
}

/// An operator's change to a blueprint (`svc_ops_update_blueprint`).
#[derive(Debug, Clone, Default)]
pub struct BlueprintChange {
    /// The new variance and its variantKey.
    pub variance: Option<(Value, String)>,
    /// `Some(true)` makes it the operator default of its (app, contractHash), clearing the flag
    /// on the others in the same transaction.
    pub is_operator_default: Option<bool>,
}

#[async_trait::async_trait]
pub trait BlueprintRepository: Send + Sync {
    async fn insert(&self, record: &BlueprintRecord) -> Result<()>;
    /// Inserts unless the record's app already holds `max` blueprints (the shared pool's not
    /// counted). The count and the insert are one step: concurrent inserts never pass `max`.
    async fn insert_bounded(&self, record: &BlueprintRecord, max: u64) -> Result<BoundedInsert>;
    /// Inserts unless a blueprint with this id exists; `true` when inserted (pool imports).
    async fn insert_if_absent(&self, record: &BlueprintRecord) -> Result<bool>;
    /// Writes every field of `record` over the blueprint with its id, or inserts it.
    async fn upsert(&self, record: &BlueprintRecord) -> Result<()>;
    /// Shared, not owned: the reuse path's reads are answered from memory
    /// ([`crate::services::blueprints::BlueprintReadCache`]) without copying a whole component.
    async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>>;
    /// The newest blueprint for the exact reuse key, in the app or the shared pool.
    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>>;
    /// The id of the app's operator default for `contract_hash` when it can be served (it has a
    /// compiled module). Read from the flags alone: no blueprint's code, contract or vector.
    async fn operator_default_id(&self, app_id: &str, contract_hash: &str) -> Result<Option<String>>;
    /// Whether the app or the shared pool caches a blueprint for the intent.
    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool>;
    /// Whole records matching `filter`, oldest first.
    async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>>;
    /// At most `limit` rows matching `filter` after `after` (from the first when `None`), oldest
    /// first, without what a listing does not show (source, code, vector).
    async fn list_page(
        &self,
        filter: &BlueprintFilter,
        after: Option<&ListingPosition>,
        limit: u64,
    ) -> Result<Vec<BlueprintListing>>;
    /// How many blueprints the app holds (not counting the shared pool).
    async fn count_in_app(&self, app_id: &str) -> Result<u64>;
    /// What the index needs of every blueprint changed after `since` (all when `None`), oldest
    /// change first.
    async fn summaries(&self, since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>>;
    /// Every stored blueprint id (a replica drops from its index what another deleted).
    async fn ids(&self) -> Result<Vec<String>>;
    async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<()>;
    /// Applies `change` to the app's blueprint; `false` when the app has no such blueprint.
    async fn update(
        &self,
        app_id: &str,
        blueprint_id: &str,
        change: &BlueprintChange,
        at: DateTime<Utc>,
    ) -> Result<bool>;
    /// Deletes the app's blueprint; `false` when there was none (idempotent for callers).
    async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool>;
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The embedding service failed or answered something unusable; the cause is logged.
    #[error("embedding failed: {0}")]
    Failed(String),
}

/// Turns texts into vectors whose cosine similarity measures how alike their meanings are.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Identifies the vector space (`builtin-ngram-v1`, `openai:text-embedding-3-small`): vectors
    /// of different models are never compared.
    fn model(&self) -> &str;
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, EmbedError>;
}

impl BlueprintRecord {
    /// The record as a listing shows it.
    pub fn listing(&self) -> BlueprintListing {
        BlueprintListing {
            blueprint_id: self.blueprint_id.clone(),
            intent: self.intent.clone(),
            contract_hash: self.contract_hash.clone(),
            variant_key: self.variant_key.clone(),
            contract: self.contract.clone(),
            variance: self.variance.clone(),
            code_hash: self.code_hash.clone(),
            generator: self.generator.clone(),
            model: self.model.clone(),
            source_kind: self.source_kind,
            description: self.description.clone(),
            persona: self.persona.clone(),
            aesthetic: self.aesthetic.clone(),
            fixture_props: self.fixture_props.clone(),
            is_operator_default: self.is_operator_default,
            servable: self.is_servable(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    /// A record with empty identity and content fields, created and updated at `now`: the base of
    /// struct-update expressions (`BlueprintRecord { blueprint_id, .., ..BlueprintRecord::blank(now) }`).
    pub fn blank(now: DateTime<Utc>) -> Self {
        Self {
            blueprint_id: String::new(),
            app_id: String::new(),
            intent: String::new(),
            contract_hash: String::new(),
            variant_key: String::new(),
            contract: Contract::default(),
            variance: Value::Object(Default::default()),
            source: String::new(),
            code: String::new(),
            code_hash: String::new(),
            generator: String::new(),
            model: None,
            created_at: now,
            name: None,
            description: None,
            category: None,
            fixture_props: None,
            embedding: None,
            featured: false,
            persona: None,
            aesthetic: None,
            is_operator_default: false,
            source_kind: SourceKind::Llm,
            updated_at: now,
        }
    }
}
