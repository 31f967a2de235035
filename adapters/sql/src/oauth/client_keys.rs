use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use svc_application::ports::RepositoryError;
use svc_application::ports::oauth::{ClientKeyDelivery, OAuthClientKeyRepository};
use svc_domain::oauth::KeyGrant;

use super::entities::oauth_client_keys as client_keys;
use crate::errors::repository_error;

pub struct SeaOrmOAuthClientKeyRepository {
    db: DatabaseConnection,
}

impl SeaOrmOAuthClientKeyRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl OAuthClientKeyRepository for SeaOrmOAuthClientKeyRepository {
    async fn record(&self, client_id: &str, grant: &KeyGrant, at: DateTime<Utc>) -> Result<(), RepositoryError> {
        let row = client_keys::ActiveModel {
            key_id: Set(grant.key_id.clone()),
            client_id: Set(client_id.to_owned()),
            owner_id: Set(grant.owner_id.clone()),
            delivered_at: Set(at),
        };
        client_keys::Entity::insert(row)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn delivered(&self, client_id: &str, owner_id: &str) -> Result<Vec<ClientKeyDelivery>, RepositoryError> {
        let rows = client_keys::Entity::find()
            .filter(client_keys::Column::OwnerId.eq(owner_id))
            .filter(client_keys::Column::ClientId.eq(client_id))
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(rows
            .into_iter()
            .map(|row| ClientKeyDelivery {
                key_id: row.key_id,
                delivered_at: row.delivered_at,
            })
            .collect())
    }

    async fn forget(&self, key_id: &str) -> Result<(), RepositoryError> {
        client_keys::Entity::delete_by_id(key_id.to_owned())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}
