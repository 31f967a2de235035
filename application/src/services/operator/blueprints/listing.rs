//! `svc_ops_list_blueprints`: the app's blueprints matching every filter, a page at a time,
//! oldest first. Rows are read without their components, a batch at a time; the semantic
//! filters (persona, intent keywords) judge each batch, so a page costs its rows and the batches
//! read to fill it, at most [`MOST_ROWS_SCANNED`]: a filter that matches little answers a short
//! page (even an empty one) with a `nextCursor` at the last row it read.

use std::collections::HashSet;

use svc_domain::blueprint::listing_page::BlueprintPageLimit;
use svc_domain::blueprint::{cosine, normalize_persona};

use super::listing_cursor;
use super::{KEYWORDS_MATCH_THRESHOLD, OpsBlueprintError, OpsBlueprintService, PERSONA_MATCH_THRESHOLD};
use crate::ports::blueprints::{BlueprintFilter, BlueprintListing};

/// Rows read per batch while a semantic filter drops some: fewer round trips when matches are
/// sparse, yet a batch stays small (no source or code).
const FILTERED_BATCH: u64 = 200;

/// Rows one call reads at most while a semantic filter drops some (each batch's personas are
/// embedded): an app of 10,000 blueprints and a filter matching none costs five calls, not one
/// call that reads and embeds them all.
pub(super) const MOST_ROWS_SCANNED: u64 = 2_000;

/// `svc_ops_list_blueprints`: filters (every one given must hold) and the page asked for.
#[derive(Debug, Clone, Default)]
pub struct ListBlueprints {
    pub contract_hash: Option<String>,
    pub generator: Option<String>,
    pub persona: Option<String>,
    pub intent_keywords: Vec<String>,
    /// 1 to 100; default 20 ([`BlueprintPageLimit`]).
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// One page of the listing.
#[derive(Debug, Clone, PartialEq)]
pub struct BlueprintPage {
    pub blueprints: Vec<BlueprintListing>,
    /// Names the page's last row when more rows match after it.
    pub next_cursor: Option<String>,
}

impl OpsBlueprintService {
    /// A page of the app's blueprints matching every filter given, oldest first.
    pub async fn list(&self, app_id: &str, query: ListBlueprints) -> Result<BlueprintPage, OpsBlueprintError> {
        let limit = u64::from(BlueprintPageLimit::new(query.limit)?.get());
        let mut after = query.cursor.as_deref().map(listing_cursor::decode).transpose()?;
        let filter = BlueprintFilter {
            app_ids: Some(vec![app_id.to_owned()]),
            contract_hash: query.contract_hash.clone(),
            generator: query.generator.clone(),
            ..BlueprintFilter::default()
        };
        let keywords = query.intent_keywords.join(" ");
        let with_keywords = match keywords.trim() {
            "" => None,
            words => Some(self.matching_keywords(app_id, words).await?),
        };
        let persona = query.persona.as_deref().and_then(normalize_persona);
        let semantic = with_keywords.is_some() || persona.is_some();
        // One row past the page says whether another page follows.
        let batch = if semantic {
            FILTERED_BATCH.max(limit + 1)
        } else {
            limit + 1
        };
        let mut rows: Vec<BlueprintListing> = Vec::new();
        let mut scanned = 0;
        let mut stopped_short = false;
        loop {
            let mut read = self.repository.list_page(&filter, after.as_ref(), batch).await?;
            let exhausted = (read.len() as u64) < batch;
            scanned += read.len() as u64;
            after = read.last().map(BlueprintListing::position);
            if let Some(ids) = &with_keywords {
                read.retain(|r| ids.contains(&r.blueprint_id));
            }
            if let Some(persona) = &persona {
                read = self.with_similar_persona(read, persona).await?;
            }
            rows.extend(read);
            if exhausted || rows.len() as u64 > limit {
                break;
            }
            if scanned >= MOST_ROWS_SCANNED {
                stopped_short = true;
                break;
            }
        }
        let more = rows.len() as u64 > limit;
        rows.truncate(limit as usize);
        let next_cursor = match (rows.last(), &after) {
            (Some(last), _) if more => Some(listing_cursor::encode(&last.position())),
            // The page is short of its limit: go on after the last row read, not the last kept.
            (_, Some(read_last)) if stopped_short => Some(listing_cursor::encode(read_last)),
            _ => None,
        };
        Ok(BlueprintPage {
            blueprints: rows,
            next_cursor,
        })
    }

    /// Ids of the app's blueprints whose intent and description mean what `words` say.
    async fn matching_keywords(&self, app_id: &str, words: &str) -> Result<HashSet<String>, OpsBlueprintError> {
        let hits = self
            .catalog
            .rank(&[app_id.to_owned()], words, KEYWORDS_MATCH_THRESHOLD)
            .await?;
        Ok(hits.into_iter().map(|h| h.blueprint_id).collect())
    }

    /// The rows whose persona is `persona` or close to it in meaning; a row without one never.
    async fn with_similar_persona(
        &self,
        rows: Vec<BlueprintListing>,
        persona: &str,
    ) -> Result<Vec<BlueprintListing>, OpsBlueprintError> {
        if rows.iter().all(|r| r.persona.is_none()) {
            return Ok(Vec::new());
        }
        let mut texts: Vec<String> = vec![persona.to_owned()];
        for stored in rows.iter().filter_map(|r| r.persona.clone()) {
            if !texts.contains(&stored) {
                texts.push(stored);
            }
        }
        let vectors = self
            .catalog
            .embedder()
            .embed(&texts)
            .await
            .map_err(|e| OpsBlueprintError::Catalog(e.into()))?;
        let similar = |stored: &str| {
            stored == persona
                || texts
                    .iter()
                    .position(|t| t == stored)
                    .is_some_and(|i| cosine(&vectors[0], &vectors[i]) >= PERSONA_MATCH_THRESHOLD)
        };
        Ok(rows
            .into_iter()
            .filter(|r| r.persona.as_deref().is_some_and(similar))
            .collect())
    }
}
