use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::agent::{AppRecord, AppRepository};

use super::entities::app;
use super::seam::db;

/// Name of an app created implicitly as its owner's default.
pub const DEFAULT_APP_NAME: &str = "My app";

pub struct SeaOrmAppRepository {
    db: DatabaseConnection,
}

impl SeaOrmAppRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    async fn oldest_default(&self, owner_id: &str) -> Result<Option<app::Model>, RepositoryError> {
        app::Entity::find()
            .filter(app::Column::OwnerId.eq(owner_id))
            .filter(app::Column::IsDefault.eq(true))
            .order_by_asc(app::Column::CreatedAt)
            .order_by_asc(app::Column::AppId)
            .one(&self.db)
            .await
            .map_err(db)
    }
}

fn record(m: app::Model) -> AppRecord {
    AppRecord {
        app_id: m.app_id,
        owner_id: m.owner_id,
        display_name: m.display_name,
        system_prompt: m.system_prompt,
        created_at: m.created_at,
        updated_at: m.updated_at,
    }
}

#[async_trait::async_trait]
impl AppRepository for SeaOrmAppRepository {
    async fn default_app(
        &self,
        owner_id: &str,
        new_app_id: &str,
        now: DateTime<Utc>,
    ) -> Result<AppRecord, RepositoryError> {
        if let Some(found) = self.oldest_default(owner_id).await? {
            return Ok(record(found));
        }
        app::ActiveModel {
            app_id: Set(new_app_id.to_owned()),
            owner_id: Set(owner_id.to_owned()),
            display_name: Set(DEFAULT_APP_NAME.to_owned()),
            system_prompt: Set(None),
            is_default: Set(true),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&self.db)
        .await
        .map_err(db)?;
        // Two first requests may race; both then agree on the oldest default.
        let chosen = self.oldest_default(owner_id).await?;
        chosen
            .map(record)
            .ok_or_else(|| RepositoryError::Unavailable(anyhow::anyhow!("default app vanished")))
    }

    async fn get(&self, app_id: &str) -> Result<Option<AppRecord>, RepositoryError> {
        Ok(app::Entity::find_by_id(app_id.to_owned())
            .one(&self.db)
            .await
            .map_err(db)?
            .map(record))
    }
}
