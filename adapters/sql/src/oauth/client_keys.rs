use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::oauth::{ClientConnection, ClientKeyDelivery, OAuthClientKeyRepository};

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

/// The stored form of a connection's app: empty for a universal one.
fn app_column(connection: ClientConnection<'_>) -> String {
    connection.app_id.unwrap_or_default().to_owned()
}

#[async_trait::async_trait]
impl OAuthClientKeyRepository for SeaOrmOAuthClientKeyRepository {
    async fn record(
        &self,
        connection: ClientConnection<'_>,
        key_id: &str,
        at: DateTime<Utc>,
    ) -> Result<i64, RepositoryError> {
        let row = client_keys::ActiveModel {
            seq: NotSet,
            key_id: Set(key_id.to_owned()),
            client_id: Set(connection.client_id.to_owned()),
            owner_id: Set(connection.owner_id.to_owned()),
            app_id: Set(app_column(connection)),
            delivered_at: Set(at),
        };
        let inserted = client_keys::Entity::insert(row)
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(inserted.last_insert_id)
    }

    async fn delivered(&self, connection: ClientConnection<'_>) -> Result<Vec<ClientKeyDelivery>, RepositoryError> {
        let rows: Vec<(String, i64)> = client_keys::Entity::find()
            .select_only()
            .column(client_keys::Column::KeyId)
            .column(client_keys::Column::Seq)
            .filter(client_keys::Column::OwnerId.eq(connection.owner_id))
            .filter(client_keys::Column::ClientId.eq(connection.client_id))
            .filter(client_keys::Column::AppId.eq(app_column(connection)))
            .into_tuple()
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(rows
            .into_iter()
            .map(|(key_id, seq)| ClientKeyDelivery { key_id, seq })
            .collect())
    }

    async fn forget(&self, key_id: &str) -> Result<(), RepositoryError> {
        client_keys::Entity::delete_many()
            .filter(client_keys::Column::KeyId.eq(key_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}
