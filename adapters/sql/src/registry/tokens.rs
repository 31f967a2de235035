use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use svc_application::ports::RepositoryError;
use svc_application::ports::registry::{Publisher, RegistryTokenRepository};

use super::entities::tokens;
use crate::errors::repository_error;

pub struct SeaOrmRegistryTokenRepository {
    db: DatabaseConnection,
}

impl SeaOrmRegistryTokenRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl RegistryTokenRepository for SeaOrmRegistryTokenRepository {
    async fn insert(
        &self,
        token_sha256: &str,
        publisher: &Publisher,
        created_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        tokens::Entity::insert(tokens::ActiveModel {
            token_sha256: Set(token_sha256.to_owned()),
            publisher: Set(publisher.name.clone()),
            admin: Set(publisher.admin),
            created_at: Set(created_at),
        })
        .exec_without_returning(&self.db)
        .await
        .map_err(repository_error)?;
        Ok(())
    }

    async fn find(&self, token_sha256: &str) -> Result<Option<Publisher>, RepositoryError> {
        let row = tokens::Entity::find_by_id(token_sha256.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(row.map(|row| Publisher {
            name: row.publisher,
            admin: row.admin,
        }))
    }
}
