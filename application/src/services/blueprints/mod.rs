//! The blueprint catalog: the manifest's UIs (the UI registry), the in-memory vector index over
//! the blueprint cache, semantic lookup for the handshake, `svc_search_blueprints`,
//! `svc_list_featured_blueprints`, `svc_render_blueprint`, and blueprint pools moved between
//! servers.
//!
//! The index is rebuilt from the database at start-up (recomputing vectors of another embedder),
//! kept in sync by this process's writes, and refreshed from the database's `updated_at`
//! watermark on a timer, so replicas sharing a database converge. A blueprint deleted elsewhere
//! leaves a replica's index at the second refresh that no longer finds it (see `refresh`);
//! until then lookups re-read the record, so a lingering entry is dropped instead of served.

mod building;
mod embedded_text;
mod index;
mod manifest;
mod pool;
mod read_cache;
mod search;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use svc_domain::blueprint::normalized;

use crate::ports::blueprints::{BlueprintRecord, BlueprintRepository, EmbedError, Embedder, StoredEmbedding};
use crate::ports::{BoundedInsert, Clock, RepositoryError};

pub use embedded_text::{EMBEDDED_TEXT_MAX_CHARS, embedded_part};
pub use index::{BlueprintEntry, IndexedBlueprint, VectorIndex};
pub use manifest::{MANIFEST_CONTENT_TYPE, MCP_APPS_CONTENT_TYPE, ManifestBundle, ManifestUi, ManifestUiDraft};
pub use pool::{POOL_FORMAT, POOL_VERSION, PoolBlueprint, PoolFile, PoolImport};
pub use read_cache::BlueprintReadCache;
pub use search::{RankedHit, SearchPage, SearchRow, SemanticMatch};

/// Cosine similarity from which the handshake reuses a cached blueprint for a different intent
/// (with the same contractHash and variantKey), for the built-in embedder.
///
/// Why 0.50, measured with `adapters/embedding/tests/retrieval_quality.rs` on its labelled set:
/// - 16 near misses (an intent sharing a word with a cached intent but asking for another
///   component: `order review` / `order approval`, `flight status` / `flight booking`) score 0.29
///   to 0.49, except `login history` / `login form` at 0.65 (`form` weighs little). At 0.40, 11 of
///   them would reuse; at 0.50, one.
/// - Of 60 paraphrases, 19 reach their blueprint's intent-and-description text at 0.50 (30 at
///   0.40), and 12 reach a bare intent (what a generated blueprint is embedded from).
/// - No query reaches an unrelated blueprint above 0.27.
///
/// A wrong reuse is worse than a missed one (the result looks like success while the card was
/// built for another purpose; a miss costs one generation), so the threshold sits above the
/// near-miss cluster. The contract guard narrows it further: near misses rarely share the exact
/// contract. `blueprints.semantic_threshold` overrides it (another embedder needs its own value;
/// see docs/blueprints.md).
pub const BUILTIN_SEMANTIC_THRESHOLD: f64 = 0.50;

/// Lowest cosine a semantic search row may have: on the labelled set 90% of queries score below
/// 0.18 against every wrong blueprint, so rows under 0.2 share little more than common character
/// n-grams with the query.
pub const BUILTIN_SEARCH_FLOOR: f64 = 0.2;

/// How far before its watermark a refresh starts reading.
const REFRESH_OVERLAP_SECONDS: i64 = 30;

/// Texts embedded per batch when the index is rebuilt.
const EMBED_BATCH: usize = 128;

#[derive(Debug, Clone)]
pub struct CatalogSettings {
    pub semantic_threshold: f64,
    pub search_floor: f64,
}

impl Default for CatalogSettings {
    fn default() -> Self {
        Self {
            semantic_threshold: BUILTIN_SEMANTIC_THRESHOLD,
            search_floor: BUILTIN_SEARCH_FLOOR,
        }
    }
}

/// What [`BlueprintCatalog::store_bounded`] answers.
#[derive(Debug)]
pub enum Bounded {
    /// Stored (with its vector, when the embedder answered).
    Stored(Box<BlueprintRecord>),
    /// Nothing stored: the app held `stored` blueprints, as many as the bound or more.
    Full { stored: u64 },
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// A `svc.ui.json` that cannot be served: names the file and the reason.
    #[error("{file}: {message}")]
    Manifest { file: String, message: String },
    /// A pool file that cannot be imported.
    #[error("pool file: {0}")]
    Pool(String),
}

#[derive(Clone)]
pub struct BlueprintCatalog {
    inner: Arc<Inner>,
}

/// Bytes of query texts and their vectors the query cache keeps (about 5,000 short queries).
const QUERY_CACHE_BYTES: u64 = 8 << 20;

struct Inner {
    repo: Arc<dyn BlueprintRepository>,
    embedder: Arc<dyn Embedder>,
    clock: Arc<dyn Clock>,
    settings: CatalogSettings,
    index: RwLock<VectorIndex>,
    /// Newest `updated_at` the index has seen.
    watermark: Mutex<Option<DateTime<Utc>>>,
    /// Indexed ids the database did not have at the last refresh.
    missing: Mutex<HashSet<String>>,
    /// `None`: the server has no UI registry (no manifest `blueprints` section).
    uis: RwLock<Option<Vec<ManifestUi>>>,
    queries: moka::sync::Cache<String, Arc<Vec<f32>>>,
    /// `false` while the start-up build runs in the background (see `building`).
    index_ready: tokio::sync::watch::Sender<bool>,
}

impl BlueprintCatalog {
    pub fn new(
        repo: Arc<dyn BlueprintRepository>,
        embedder: Arc<dyn Embedder>,
        clock: Arc<dyn Clock>,
        settings: CatalogSettings,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                repo,
                embedder: Arc::new(embedded_text::BoundedEmbedder(embedder)),
                clock,
                settings,
                index: RwLock::new(VectorIndex::new()),
                watermark: Mutex::new(None),
                missing: Mutex::new(HashSet::new()),
                uis: RwLock::new(None),
                queries: moka::sync::Cache::builder()
                    .weigher(|text: &String, vector: &Arc<Vec<f32>>| {
                        u32::try_from(text.len() + vector.len() * 4).unwrap_or(u32::MAX)
                    })
                    .max_capacity(QUERY_CACHE_BYTES)
                    .build(),
                index_ready: tokio::sync::watch::Sender::new(true),
            }),
        }
    }

    pub fn settings(&self) -> &CatalogSettings {
        &self.inner.settings
    }

    /// The embedder of the index, for callers comparing other texts in the same space.
    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.inner.embedder
    }

    pub fn embedder_model(&self) -> &str {
        self.inner.embedder.model()
    }

    /// Blueprints in the index.
    pub fn indexed(&self) -> usize {
        self.read_index().len()
    }

    fn read_index(&self) -> std::sync::RwLockReadGuard<'_, VectorIndex> {
        self.inner.index.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write_index(&self) -> std::sync::RwLockWriteGuard<'_, VectorIndex> {
        self.inner
            .index
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The unit vector of a query text (its [`embedded_part`]), cached by that part.
    async fn query_vector(&self, text: &str) -> Result<Arc<Vec<f32>>, EmbedError> {
        let text = embedded_part(text);
        if let Some(v) = self.inner.queries.get(text) {
            return Ok(v);
        }
        let mut vectors = self.inner.embedder.embed(&[text.to_owned()]).await?;
        let v = Arc::new(normalized(vectors.pop().unwrap_or_default()));
        self.inner.queries.insert(text.to_owned(), v.clone());
        Ok(v)
    }

    /// Stores a new blueprint with its embedding and indexes it. When the embedder fails, the
    /// blueprint is stored without a vector (the next rebuild computes it) and the failure is
    /// logged: caching a component must not fail a render.
    pub async fn store(&self, mut record: BlueprintRecord) -> Result<BlueprintRecord, CatalogError> {
        self.embed_record(&mut record).await;
        self.inner.repo.insert(&record).await?;
        self.index_record(&record);
        Ok(record)
    }

    /// Like [`BlueprintCatalog::store`], unless the record's app already holds `max` blueprints
    /// (counted and inserted as one step: concurrent stores never pass `max`). The embedding is
    /// made first, so a full app costs an embedding and nothing else.
    pub async fn store_bounded(&self, mut record: BlueprintRecord, max: u64) -> Result<Bounded, CatalogError> {
        self.embed_record(&mut record).await;
        match self.inner.repo.insert_bounded(&record, max).await? {
            BoundedInsert::Inserted => {
                self.index_record(&record);
                Ok(Bounded::Stored(Box::new(record)))
            }
            BoundedInsert::Full { stored } => Ok(Bounded::Full { stored }),
        }
    }

    /// Like [`BlueprintCatalog::store`], but keeps an existing blueprint with the same id; `true`
    /// when inserted.
    pub async fn store_if_absent(&self, mut record: BlueprintRecord) -> Result<bool, CatalogError> {
        self.embed_record(&mut record).await;
        let inserted = self.inner.repo.insert_if_absent(&record).await?;
        if inserted {
            self.index_record(&record);
        }
        Ok(inserted)
    }

    async fn embed_record(&self, record: &mut BlueprintRecord) {
        match self.inner.embedder.embed(&[record.embedding_text()]).await {
            Ok(mut v) => {
                record.embedding = v.pop().map(|vector| StoredEmbedding {
                    model: self.inner.embedder.model().to_owned(),
                    vector,
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, blueprint_id = %record.blueprint_id, "embedding a blueprint failed; it is stored without a vector");
                record.embedding = None;
            }
        }
    }

    fn index_record(&self, record: &BlueprintRecord) {
        let Some(embedding) = record.embedding.as_ref() else {
            return;
        };
        if embedding.model != self.inner.embedder.model() {
            return;
        }
        let summary = crate::ports::blueprints::BlueprintSummary {
            blueprint_id: record.blueprint_id.clone(),
            app_id: record.app_id.clone(),
            intent: record.intent.clone(),
            name: record.name.clone(),
            description: record.description.clone(),
            category: record.category.clone(),
            contract_hash: record.contract_hash.clone(),
            variant_key: record.variant_key.clone(),
            contract: record.contract.as_value(),
            generator: record.generator.clone(),
            featured: record.featured,
            persona: record.persona.clone(),
            embedding: None,
            updated_at: record.updated_at,
        };
        let vector = normalized(embedding.vector.clone());
        self.write_index()
            .upsert(IndexedBlueprint::of_summary(&summary), &vector);
    }

    /// Re-reads a blueprint after another writer changed it (an operator update), or drops it
    /// from the index when it is gone.
    pub async fn reindex(&self, blueprint_id: &str) -> Result<(), CatalogError> {
        match self.inner.repo.get(blueprint_id).await? {
            Some(shared) => {
                let mut record = Arc::unwrap_or_clone(shared);
                if record
                    .embedding
                    .as_ref()
                    .is_none_or(|e| e.model != self.inner.embedder.model())
                {
                    self.embed_record(&mut record).await;
                    if let Some(e) = &record.embedding {
                        self.inner.repo.set_embedding(blueprint_id, e).await?;
                    }
                }
                self.index_record(&record);
            }
            None => self.forget(blueprint_id),
        }
        Ok(())
    }

    /// Drops a deleted blueprint from the index.
    pub fn forget(&self, blueprint_id: &str) {
        self.write_index().remove(blueprint_id);
    }

    /// Rebuilds the index from the database; vectors that are missing or of another embedder are
    /// computed and written back. Returns how many blueprints are indexed. When the embedder fails,
    /// the blueprints it could not embed stay out of the index (logged) until the next rebuild.
    pub async fn rebuild(&self) -> Result<usize, CatalogError> {
        let summaries = self.inner.repo.summaries(None).await?;
        let entries = self.prepare(summaries).await?;
        let mut index = VectorIndex::new();
        for (item, vector) in entries {
            index.upsert(item, &vector);
        }
        let mut current = self.write_index();
        // Blueprints stored while the database was read are in the index being replaced.
        index.absorb_missing(&current);
        let count = index.len();
        *current = index;
        Ok(count)
    }

    /// Indexes what changed in the database since the last rebuild or refresh (other replicas'
    /// writes). Returns how many blueprints were (re)indexed.
    pub async fn refresh(&self) -> Result<usize, CatalogError> {
        // Re-reading a margin before the watermark tolerates replicas' clock skew and
        // transactions that commit after a later one; re-indexing a row is idempotent.
        let since = self
            .inner
            .watermark
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|w| w - chrono::TimeDelta::seconds(REFRESH_OVERLAP_SECONDS));
        let summaries = self.inner.repo.summaries(since).await?;
        let entries = self.prepare(summaries).await?;
        let count = entries.len();
        let stored: HashSet<String> = self.inner.repo.ids().await?.into_iter().collect();
        let mut index = self.write_index();
        for (item, vector) in entries {
            index.upsert(item, &vector);
        }
        self.prune_deleted(&mut index, &stored);
        Ok(count)
    }

    /// Drops what other replicas deleted. An id goes only when two refreshes in a row miss it:
    /// a blueprint this process stores between reading the ids and pruning is absent from that
    /// read, but present in the next.
    fn prune_deleted(&self, index: &mut VectorIndex, stored: &HashSet<String>) {
        let mut missing = self.inner.missing.lock().unwrap_or_else(|p| p.into_inner());
        let now_missing: HashSet<String> = index
            .items()
            .map(|item| &item.entry.id)
            .filter(|id| !stored.contains(*id))
            .cloned()
            .collect();
        for id in now_missing.intersection(&missing) {
            index.remove(id);
        }
        *missing = now_missing;
    }

    /// Index entries with unit vectors for `summaries`, embedding (and storing) the vectors that
    /// are missing or of another embedder; advances the watermark.
    async fn prepare(
        &self,
        summaries: Vec<crate::ports::blueprints::BlueprintSummary>,
    ) -> Result<Vec<(IndexedBlueprint, Vec<f32>)>, CatalogError> {
        let model = self.inner.embedder.model().to_owned();
        let mut fresh: std::collections::HashMap<usize, Vec<f32>> = std::collections::HashMap::new();
        let stale: Vec<usize> = summaries
            .iter()
            .enumerate()
            .filter(|(_, s)| s.embedding.as_ref().is_none_or(|e| e.model != model))
            .map(|(i, _)| i)
            .collect();
        for chunk in stale.chunks(EMBED_BATCH) {
            let texts: Vec<String> = chunk.iter().map(|&i| summaries[i].embedding_text()).collect();
            let vectors = match self.inner.embedder.embed(&texts).await {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!(error = %e, blueprints = chunk.len(), "embedding blueprints for the index failed; they stay out of it until the next rebuild");
                    continue;
                }
            };
            for (&i, vector) in chunk.iter().zip(vectors) {
                let embedding = StoredEmbedding {
                    model: model.clone(),
                    vector: vector.clone(),
                };
                self.inner
                    .repo
                    .set_embedding(&summaries[i].blueprint_id, &embedding)
                    .await?;
                fresh.insert(i, vector);
            }
        }
        let mut newest = *self.inner.watermark.lock().unwrap_or_else(|p| p.into_inner());
        let mut entries = Vec::with_capacity(summaries.len());
        for (i, summary) in summaries.iter().enumerate() {
            newest = newest.max(Some(summary.updated_at));
            let vector = match fresh.remove(&i) {
                Some(v) => v,
                None => match &summary.embedding {
                    Some(e) if e.model == model => e.vector.clone(),
                    _ => continue,
                },
            };
            entries.push((IndexedBlueprint::of_summary(summary), normalized(vector)));
        }
        *self.inner.watermark.lock().unwrap_or_else(|p| p.into_inner()) = newest;
        Ok(entries)
    }

    /// Refreshes the index every `every` until the process ends; failures are logged.
    pub fn spawn_refresh(&self, every: Duration) {
        let catalog = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                if let Err(e) = catalog.refresh().await {
                    tracing::warn!(error = %e, "refreshing the blueprint index failed");
                }
            }
        });
    }

    fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }
}
