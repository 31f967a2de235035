use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use svc_application::ports::RepositoryError;
use svc_application::ports::registry::{AuthorKey, AuthorKeyRepository, KeyRegistration};

use super::entities::author_keys;
use crate::errors::repository_error;

pub struct SeaOrmAuthorKeyRepository {
    db: DatabaseConnection,
}

impl SeaOrmAuthorKeyRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl AuthorKeyRepository for SeaOrmAuthorKeyRepository {
    async fn register(&self, key: &AuthorKey) -> Result<KeyRegistration, RepositoryError> {
        let inserted = author_keys::Entity::insert(author_keys::ActiveModel {
            public_key_id: Set(key.public_key_id.clone()),
            public_key: Set(key.public_key.clone()),
            publisher: Set(key.publisher.clone()),
            created_at: Set(key.created_at),
        })
        .exec_without_returning(&self.db)
        .await
        .map_err(repository_error);
        match inserted {
            Ok(_) => Ok(KeyRegistration::Created(key.clone())),
            // The id is taken: the same key registered before (ids derive from keys).
            Err(RepositoryError::Conflict(_)) => match self.get(&key.public_key_id).await? {
                Some(existing) if existing.publisher == key.publisher && existing.public_key == key.public_key => {
                    Ok(KeyRegistration::Existing(existing))
                }
                Some(_) => Ok(KeyRegistration::OwnedByAnother),
                None => Err(RepositoryError::Conflict(
                    "the author key changed under a racing writer".into(),
                )),
            },
            Err(other) => Err(other),
        }
    }

    async fn get(&self, public_key_id: &str) -> Result<Option<AuthorKey>, RepositoryError> {
        let row = author_keys::Entity::find_by_id(public_key_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(row.map(|row| AuthorKey {
            public_key_id: row.public_key_id,
            public_key: row.public_key,
            publisher: row.publisher,
            created_at: row.created_at,
        }))
    }
}
