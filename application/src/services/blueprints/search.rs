//! Lookups over the catalog: the handshake's semantic match, `svc_search_blueprints`, a ranked
//! semantic listing other tools reuse, and the featured list.

use svc_domain::blueprint::{RowSource, ScoredRow, dot, manifest_text_score, merge_rows, normalized};

use crate::ports::blueprints::{BlueprintFilter, SHARED_POOL_APP_ID};

use super::{BlueprintCatalog, BlueprintEntry, CatalogError};

/// A cached blueprint that may serve a handshake whose intent differs.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticMatch {
    pub blueprint_id: String,
    pub similarity: f64,
    /// The cached blueprint's intent.
    pub cached_intent: String,
}

/// One row of `svc_search_blueprints`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRow {
    pub entry: BlueprintEntry,
    pub score: f64,
    /// `true` when the row is a manifest UI.
    pub manifest: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchPage {
    /// At most `limit` rows, best first.
    pub rows: Vec<SearchRow>,
    /// Matches before the limit.
    pub total: usize,
}

/// A blueprint ranked by semantic similarity to a query (for operator listings that filter by
/// persona or intent keywords).
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    pub blueprint_id: String,
    pub score: f64,
    pub app_id: String,
    pub contract_hash: String,
    pub generator: String,
}

impl BlueprintCatalog {
    /// The most similar cached blueprint visible to `app_id` with the same contract and variance
    /// whose similarity reaches the semantic threshold. An embedder failure is logged and answers
    /// no match (the handshake then generates).
    pub async fn semantic_match(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<SemanticMatch>, CatalogError> {
        let query = match self.query_vector(intent).await {
            Ok(q) => q,
            Err(e) => {
                tracing::warn!(error = %e, "embedding a handshake intent failed; no semantic lookup");
                return Ok(None);
            }
        };
        if !self.index_ready() {
            return self
                .semantic_from_database(app_id, query.as_slice(), contract_hash, variant_key)
                .await;
        }
        let candidates: Vec<SemanticMatch> = {
            let index = self.read_index();
            index
                .search(&query, self.inner.settings.semantic_threshold, |b| {
                    b.visible_to(app_id) && b.contract_hash == contract_hash && b.variant_key == variant_key
                })
                .into_iter()
                .take(4)
                .map(|hit| SemanticMatch {
                    blueprint_id: hit.blueprint.entry.id.clone(),
                    similarity: hit.score,
                    cached_intent: hit.blueprint.intent.clone(),
                })
                .collect()
        };
        // The index may lag a delete on another replica: serve only what is still stored, and
        // only a blueprint with a compiled module.
        for candidate in candidates {
            match self.inner.repo.get(&candidate.blueprint_id).await? {
                Some(stored) if stored.is_servable() => return Ok(Some(candidate)),
                Some(_) => {}
                None => self.forget(&candidate.blueprint_id),
            }
        }
        Ok(None)
    }

    /// [`BlueprintCatalog::semantic_match`] while the index is being built: the stored vectors
    /// of the blueprints with this contract (a narrow, indexed query), scored like the index does.
    async fn semantic_from_database(
        &self,
        app_id: &str,
        query: &[f32],
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<SemanticMatch>, CatalogError> {
        let filter = BlueprintFilter {
            app_ids: Some(vec![app_id.to_owned(), SHARED_POOL_APP_ID.to_owned()]),
            contract_hash: Some(contract_hash.to_owned()),
            ..BlueprintFilter::default()
        };
        let model = self.inner.embedder.model();
        let threshold = self.inner.settings.semantic_threshold;
        let best = self
            .inner
            .repo
            .list(&filter)
            .await?
            .into_iter()
            .filter(|b| b.variant_key == variant_key && b.is_servable())
            .filter_map(|b| {
                let embedding = b.embedding.as_ref().filter(|e| e.model == model)?;
                let vector = normalized(embedding.vector.clone());
                let similarity = (vector.len() == query.len()).then(|| dot(&vector, query))?;
                (similarity >= threshold).then_some(SemanticMatch {
                    blueprint_id: b.blueprint_id,
                    similarity,
                    cached_intent: b.intent,
                })
            })
            // Best first, equal scores by id: the order the index ranks in.
            .min_by(|a, b| {
                b.similarity
                    .partial_cmp(&a.similarity)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then_with(|| a.blueprint_id.cmp(&b.blueprint_id))
            });
        Ok(best)
    }

    /// `svc_search_blueprints`: manifest UIs by name and description (1.0 for an exact name,
    /// 0.7 for a substring), the cache (manifest UIs included) by cosine similarity from the
    /// search floor; merged by id with the manifest row winning, best first.
    pub async fn search(&self, app_id: &str, query: &str, limit: usize) -> Result<SearchPage, CatalogError> {
        let mut candidates: Vec<ScoredRow<SearchRow>> = Vec::new();
        for ui in self.manifest_uis() {
            if let Some(score) = manifest_text_score(query, &ui.name, &ui.description) {
                candidates.push(ScoredRow {
                    id: ui.id.clone(),
                    source: RowSource::Manifest,
                    score,
                    row: SearchRow {
                        entry: ui.entry(),
                        score,
                        manifest: true,
                    },
                });
            }
        }
        let mut semantic_total = 0;
        self.wait_for_index().await;
        match self.query_vector(query.trim()).await {
            Ok(vector) => {
                let index = self.read_index();
                let visible = |b: &super::IndexedBlueprint| b.visible_to(app_id);
                let floor = self.inner.settings.search_floor;
                // Only the best rows are cloned; manifest rows found by name too may take places
                // in the merge, so keep as many extra.
                let (hits, total) = index.top(&vector, floor, limit + candidates.len(), visible);
                semantic_total = total;
                // A manifest row that the scan also found is one result, not two.
                let duplicates = candidates
                    .iter()
                    .filter(|c| {
                        index.get(&c.id).is_some_and(visible) && index.score(&c.id, &vector).is_some_and(|s| s >= floor)
                    })
                    .count();
                semantic_total -= duplicates;
                for hit in hits {
                    candidates.push(ScoredRow {
                        id: hit.blueprint.entry.id.clone(),
                        source: RowSource::Cache,
                        score: hit.score,
                        row: SearchRow {
                            entry: hit.blueprint.entry.clone(),
                            score: hit.score,
                            manifest: hit.blueprint.is_manifest(),
                        },
                    });
                }
            }
            Err(e) => tracing::warn!(error = %e, "embedding a search query failed; name matches only"),
        }
        let lexical = candidates.iter().filter(|c| c.source == RowSource::Manifest).count();
        let merged = merge_rows(candidates);
        let total = lexical + semantic_total;
        let rows = merged.into_iter().take(limit).map(|r| r.row).collect();
        Ok(SearchPage { rows, total })
    }

    /// Blueprints visible to any of `app_ids` ranked by cosine similarity to `query`, from
    /// `min_score`, best first. Unlike [`BlueprintCatalog::search`] it fails when the embedder
    /// fails, since a filter that silently matched nothing would mislead.
    pub async fn rank(&self, app_ids: &[String], query: &str, min_score: f64) -> Result<Vec<RankedHit>, CatalogError> {
        let vector = self.query_vector(query.trim()).await?;
        self.wait_for_index().await;
        let index = self.read_index();
        Ok(index
            .search(&vector, min_score, |b| app_ids.contains(&b.app_id))
            .into_iter()
            .map(|hit| RankedHit {
                blueprint_id: hit.blueprint.entry.id.clone(),
                score: hit.score,
                app_id: hit.blueprint.app_id.clone(),
                contract_hash: hit.blueprint.contract_hash.clone(),
                generator: hit.blueprint.generator.clone(),
            })
            .collect())
    }

    /// `svc_list_featured_blueprints`: featured manifest UIs in manifest order, then featured
    /// cached blueprints visible to `app_id` by id (once the index is built).
    pub async fn featured(&self, app_id: &str) -> Vec<BlueprintEntry> {
        self.wait_for_index().await;
        let mut out: Vec<BlueprintEntry> = self
            .manifest_uis()
            .iter()
            .filter(|ui| ui.featured)
            .map(|ui| ui.entry())
            .collect();
        let index = self.read_index();
        let mut cached: Vec<BlueprintEntry> = index
            .items()
            .filter(|b| b.entry.featured && b.visible_to(app_id) && !b.is_manifest())
            .filter(|b| !out.iter().any(|e| e.id == b.entry.id))
            .map(|b| b.entry.clone())
            .collect();
        cached.sort_by(|a, b| a.id.cmp(&b.id));
        out.extend(cached);
        out
    }
}
