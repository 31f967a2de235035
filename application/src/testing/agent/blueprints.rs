//! The in-memory store's blueprints (`BlueprintRepository`): an app sees its own and the shared
//! pool's, kept in creation order.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{InMemoryAgentStore, Result};
use crate::ports::agent::{BlueprintRecord, BlueprintRepository};
use crate::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintListing, BlueprintSummary, ListingPosition, SHARED_POOL_APP_ID,
    StoredEmbedding,
};
use crate::ports::{BoundedInsert, RepositoryError};
use crate::testing::lock;

/// Whether `app_id` sees `record`: its own, or one of the shared pool.
fn visible_to(record: &BlueprintRecord, app_id: &str) -> bool {
    record.app_id == app_id || record.app_id == SHARED_POOL_APP_ID
}

#[async_trait::async_trait]
impl BlueprintRepository for InMemoryAgentStore {
    async fn insert(&self, record: &BlueprintRecord) -> Result<()> {
        let mut state = lock(&self.0);
        if state.blueprints.iter().any(|b| b.blueprint_id == record.blueprint_id) {
            return Err(RepositoryError::Conflict(record.blueprint_id.clone()));
        }
        state.blueprints.push(record.clone());
        Ok(())
    }

    async fn insert_bounded(&self, record: &BlueprintRecord, max: u64) -> Result<BoundedInsert> {
        // One lock for the count and the insert, as the SQL adapter's one transaction.
        let mut state = lock(&self.0);
        let stored = state.blueprints.iter().filter(|b| b.app_id == record.app_id).count() as u64;
        if stored >= max {
            return Ok(BoundedInsert::Full { stored });
        }
        if state.blueprints.iter().any(|b| b.blueprint_id == record.blueprint_id) {
            return Err(RepositoryError::Conflict(record.blueprint_id.clone()));
        }
        state.blueprints.push(record.clone());
        Ok(BoundedInsert::Inserted)
    }

    async fn insert_if_absent(&self, record: &BlueprintRecord) -> Result<bool> {
        Ok(BlueprintRepository::insert(self, record).await.is_ok())
    }

    async fn operator_default_id(&self, app_id: &str, contract_hash: &str) -> Result<Option<String>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .find(|b| {
                b.app_id == app_id && b.contract_hash == contract_hash && b.is_operator_default && b.is_servable()
            })
            .map(|b| b.blueprint_id.clone()))
    }

    async fn upsert(&self, record: &BlueprintRecord) -> Result<()> {
        let mut state = lock(&self.0);
        state.blueprints.retain(|b| b.blueprint_id != record.blueprint_id);
        state.blueprints.push(record.clone());
        Ok(())
    }

    async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .find(|b| b.blueprint_id == blueprint_id)
            .cloned()
            .map(Arc::new))
    }

    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .rev()
            .find(|b| {
                visible_to(b, app_id)
                    && b.intent == intent
                    && b.contract_hash == contract_hash
                    && b.variant_key == variant_key
            })
            .cloned()
            .map(Arc::new))
    }

    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .any(|b| visible_to(b, app_id) && b.intent == intent))
    }

    async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .filter(|b| filter.app_ids.as_ref().is_none_or(|ids| ids.contains(&b.app_id)))
            .filter(|b| filter.contract_hash.as_ref().is_none_or(|h| *h == b.contract_hash))
            .filter(|b| filter.generator.as_ref().is_none_or(|g| *g == b.generator))
            .filter(|b| !filter.featured_only || b.featured)
            .cloned()
            .collect())
    }

    async fn list_page(
        &self,
        filter: &BlueprintFilter,
        after: Option<&ListingPosition>,
        limit: u64,
    ) -> Result<Vec<BlueprintListing>> {
        let mut rows: Vec<BlueprintListing> = BlueprintRepository::list(self, filter)
            .await?
            .iter()
            .map(BlueprintRecord::listing)
            .collect();
        let key = |p: &ListingPosition| (p.created_at, p.blueprint_id.clone());
        rows.sort_by_key(|r| key(&r.position()));
        rows.retain(|r| after.is_none_or(|after| key(&r.position()) > key(after)));
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(rows)
    }

    async fn count_in_app(&self, app_id: &str) -> Result<u64> {
        Ok(lock(&self.0).blueprints.iter().filter(|b| b.app_id == app_id).count() as u64)
    }

    async fn summaries(&self, _since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>> {
        Ok(Vec::new())
    }

    async fn ids(&self) -> Result<Vec<String>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .map(|b| b.blueprint_id.clone())
            .collect())
    }

    async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<()> {
        if let Some(b) = lock(&self.0)
            .blueprints
            .iter_mut()
            .find(|b| b.blueprint_id == blueprint_id)
        {
            b.embedding = Some(embedding.clone());
        }
        Ok(())
    }

    async fn update(
        &self,
        app_id: &str,
        blueprint_id: &str,
        change: &BlueprintChange,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let mut state = lock(&self.0);
        let Some(b) = state
            .blueprints
            .iter_mut()
            .find(|b| b.blueprint_id == blueprint_id && b.app_id == app_id)
        else {
            return Ok(false);
        };
        if let Some((variance, key)) = &change.variance {
            b.variance = variance.clone();
            b.variant_key = key.clone();
        }
        if let Some(flag) = change.is_operator_default {
            b.is_operator_default = flag;
        }
        b.updated_at = at;
        Ok(true)
    }

    async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool> {
        let mut state = lock(&self.0);
        let before = state.blueprints.len();
        state
            .blueprints
            .retain(|b| !(b.blueprint_id == blueprint_id && b.app_id == app_id));
        Ok(state.blueprints.len() != before)
    }
}
