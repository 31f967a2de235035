//! `SqlConsoleSessions`: console sessions in `console_sessions`, shared by every replica.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};
use svc_application::ports::console_sessions::{ConsoleSessionStore, StoredConsoleSession};
use svc_application::ports::{RepositoryError, oldest_past_cap};

use crate::errors::repository_error;
use crate::write_guards::WriteGuard;

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

fn session_row(s: &StoredConsoleSession) -> entity::ActiveModel {
    entity::ActiveModel {
        token_hash: Set(s.token_hash.clone()),
        principal_id: Set(s.principal_id.clone()),
        locked_app: Set(s.locked_app.clone()),
        key_id: Set(s.key_id.clone()),
        csrf_token: Set(s.csrf_token.clone()),
        created_at: Set(s.created_at),
        expires_at: Set(s.expires_at),
    }
}

#[async_trait::async_trait]
impl ConsoleSessionStore for SqlConsoleSessions {
    async fn insert(&self, s: &StoredConsoleSession) -> Result<(), RepositoryError> {
        session_row(s).insert(&self.db).await.map_err(repository_error)?;
        Ok(())
    }

    async fn insert_keeping_newest(&self, s: &StoredConsoleSession, max_live: u64) -> Result<u64, RepositoryError> {
        let txn = WriteGuard::console_sessions_of(&s.principal_id)
            .begin(&self.db, s.created_at)
            .await
            .map_err(repository_error)?;
        let live = entity::Entity::find()
            .filter(entity::Column::PrincipalId.eq(s.principal_id.as_str()))
            .filter(entity::Column::ExpiresAt.gt(s.created_at))
            .order_by_asc(entity::Column::CreatedAt)
            .order_by_asc(entity::Column::TokenHash)
            .all(&txn)
            .await
            .map_err(repository_error)?;
        let ended: Vec<String> = oldest_past_cap(&live, max_live)
            .iter()
            .map(|row| row.token_hash.clone())
            .collect();
        if !ended.is_empty() {
            // Signing out: the row is deleted, so every replica refuses its cookie.
            entity::Entity::delete_many()
                .filter(entity::Column::TokenHash.is_in(ended.clone()))
                .exec(&txn)
                .await
                .map_err(repository_error)?;
        }
        session_row(s).insert(&txn).await.map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(ended.len() as u64)
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
