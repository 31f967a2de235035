//! `SqlConsoleSessions`: console sessions in `console_sessions`, shared by every replica.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::console_sessions::{ConsoleSessionStore, StoredConsoleSession};

use crate::errors::repository_error;

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "console_sessions")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub token_hash: String,
        pub principal_id: String,
        pub locked_app: Option<String>,
        pub key_id: Option<String>,
        pub csrf_token: String,
        pub created_at: DateTimeUtc,
        pub expires_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub struct SqlConsoleSessions {
    db: DatabaseConnection,
}

impl SqlConsoleSessions {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl ConsoleSessionStore for SqlConsoleSessions {
    async fn insert(&self, s: &StoredConsoleSession) -> Result<(), RepositoryError> {
        entity::ActiveModel {
            token_hash: Set(s.token_hash.clone()),
            principal_id: Set(s.principal_id.clone()),
            locked_app: Set(s.locked_app.clone()),
            key_id: Set(s.key_id.clone()),
            csrf_token: Set(s.csrf_token.clone()),
            created_at: Set(s.created_at),
            expires_at: Set(s.expires_at),
        }
        .insert(&self.db)
        .await
        .map_err(repository_error)?;
        Ok(())
    }

    async fn find(&self, token_hash: &str) -> Result<Option<StoredConsoleSession>, RepositoryError> {
        let row = entity::Entity::find_by_id(token_hash.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(row.map(|r| StoredConsoleSession {
            token_hash: r.token_hash,
            principal_id: r.principal_id,
            locked_app: r.locked_app,
            key_id: r.key_id,
            csrf_token: r.csrf_token,
            created_at: r.created_at,
            expires_at: r.expires_at,
        }))
    }

    async fn delete(&self, token_hash: &str) -> Result<(), RepositoryError> {
        entity::Entity::delete_by_id(token_hash.to_owned())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn delete_expired(&self, now: DateTime<Utc>) -> Result<(), RepositoryError> {
        entity::Entity::delete_many()
            .filter(entity::Column::ExpiresAt.lte(now))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn delete_of_principal(&self, principal_id: &str) -> Result<(), RepositoryError> {
        entity::Entity::delete_many()
            .filter(entity::Column::PrincipalId.eq(principal_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}
