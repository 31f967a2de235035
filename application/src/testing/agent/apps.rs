//! The in-memory store's apps (`AppRepository`): an owner's default app is kept beside the list,
//! and deleting it makes the owner's oldest remaining app the default.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{InMemoryAgentStore, Result};
use crate::ports::agent::{AppRecord, AppRepository, NewAppId};
use crate::ports::{BoundedInsert, RepositoryError};
use crate::testing::lock;

#[async_trait::async_trait]
impl AppRepository for InMemoryAgentStore {
    async fn default_app(
        &self,
        owner_id: &str,
        new_app_id: NewAppId<'_>,
        now: DateTime<Utc>,
    ) -> Result<Arc<AppRecord>> {
        let mut state = lock(&self.0);
        if let Some(id) = state.defaults.get(owner_id).cloned() {
            return Ok(Arc::new(
                state
                    .apps
                    .iter()
                    .find(|a| a.app_id == id)
                    .cloned()
                    .expect("default app"),
            ));
        }
        let new_app_id = new_app_id();
        let app = AppRecord::new(new_app_id.clone(), owner_id.to_owned(), None, now).expect("default name");
        state.apps.push(app.clone());
        state.defaults.insert(owner_id.to_owned(), new_app_id);
        Ok(Arc::new(app))
    }

    async fn get(&self, app_id: &str) -> Result<Option<AppRecord>> {
        Ok(lock(&self.0).apps.iter().find(|a| a.app_id == app_id).cloned())
    }

    async fn list_by_owner(&self, owner_id: &str) -> Result<Vec<AppRecord>> {
        Ok(lock(&self.0)
            .apps
            .iter()
            .filter(|a| a.owner_id == owner_id)
            .cloned()
            .collect())
    }

    async fn insert(&self, record: &AppRecord) -> Result<()> {
        let mut state = lock(&self.0);
        if state.apps.iter().any(|a| a.app_id == record.app_id) {
            return Err(RepositoryError::Conflict(record.app_id.clone()));
        }
        state.apps.push(record.clone());
        Ok(())
    }

    async fn insert_bounded(&self, record: &AppRecord, max: u64) -> Result<BoundedInsert> {
        let mut state = lock(&self.0);
        let stored = state.apps.iter().filter(|a| a.owner_id == record.owner_id).count() as u64;
        if stored >= max {
            return Ok(BoundedInsert::Full { stored });
        }
        if state.apps.iter().any(|a| a.app_id == record.app_id) {
            return Err(RepositoryError::Conflict(record.app_id.clone()));
        }
        state.apps.push(record.clone());
        Ok(BoundedInsert::Inserted)
    }

    async fn update(&self, record: &AppRecord) -> Result<bool> {
        let mut state = lock(&self.0);
        match state
            .apps
            .iter_mut()
            .find(|a| a.app_id == record.app_id && a.owner_id == record.owner_id)
        {
            Some(app) => {
                app.display_name = record.display_name.clone();
                app.system_prompt = record.system_prompt.clone();
                app.updated_at = record.updated_at;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn set_default(&self, owner_id: &str, app_id: &str) -> Result<bool> {
        let mut state = lock(&self.0);
        if !state.apps.iter().any(|a| a.app_id == app_id && a.owner_id == owner_id) {
            return Ok(false);
        }
        state.defaults.insert(owner_id.to_owned(), app_id.to_owned());
        Ok(true)
    }

    async fn delete(&self, owner_id: &str, app_id: &str) -> Result<()> {
        let mut state = lock(&self.0);
        state.apps.retain(|a| !(a.app_id == app_id && a.owner_id == owner_id));
        if state.defaults.get(owner_id).is_some_and(|d| d == app_id) {
            state.defaults.remove(owner_id);
            if let Some(oldest) = state
                .apps
                .iter()
                .find(|a| a.owner_id == owner_id)
                .map(|a| a.app_id.clone())
            {
                state.defaults.insert(owner_id.to_owned(), oldest);
            }
        }
        Ok(())
    }
}
