use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use svc_application::ports::operator::{ConnectorKeyRepository, TransitionError};
use svc_application::ports::{RepositoryError, oldest_past_cap};
use svc_domain::connector_key::{ConnectorKey, ConnectorKeyError, ConnectorKeyStatus, KeyName, KeyRevokeOutcome};

use super::entities::connector_keys;
use crate::errors::{RACE_ATTEMPTS, contention, corrupt, repository_error};
use crate::write_guards::WriteGuard;

pub struct SeaOrmConnectorKeyRepository {
    db: DatabaseConnection,
}

impl SeaOrmConnectorKeyRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl ConnectorKeyRepository for SeaOrmConnectorKeyRepository {
    async fn insert(&self, key: &ConnectorKey) -> Result<(), RepositoryError> {
        connector_keys::Entity::insert(key_row(key))
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn insert_keeping_newest(&self, key: &ConnectorKey, max_live: u64) -> Result<Vec<String>, RepositoryError> {
        let now = key.created_at;
        let txn = WriteGuard::connector_keys_of(&key.owner_user_id)
            .begin(&self.db, now)
            .await
            .map_err(repository_error)?;
        let live: Vec<ConnectorKey> = connector_keys::Entity::find()
            .filter(connector_keys::Column::OwnerUserId.eq(key.owner_user_id.as_str()))
            .filter(connector_keys::Column::Status.eq(ConnectorKeyStatus::Active.as_str()))
            .order_by_asc(connector_keys::Column::CreatedAt)
            .order_by_asc(connector_keys::Column::Id)
            .all(&txn)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(key_from_row)
            // A row that does not read is kept, so its error is answered.
            .filter(|read| read.as_ref().map_or(true, |k| k.authenticates(now)))
            .collect::<Result<_, _>>()?;
        let oldest = oldest_past_cap(&live, max_live);
        for revoking in oldest {
            // `revoke`'s transition and compare-and-set: a key its owner revokes meanwhile stays so.
            let (revoked, _) = revoking.revoke();
            connector_keys::Entity::update_many()
                .col_expr(connector_keys::Column::Status, Expr::value(revoked.status.as_str()))
                .filter(connector_keys::Column::Id.eq(revoking.id.as_str()))
                .filter(connector_keys::Column::Status.eq(revoking.status.as_str()))
                .exec(&txn)
                .await
                .map_err(repository_error)?;
        }
        connector_keys::Entity::insert(key_row(key))
            .exec_without_returning(&txn)
            .await
            .map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(oldest.iter().map(|k| k.id.clone()).collect())
    }

    async fn get(&self, key_id: &str) -> Result<Option<ConnectorKey>, RepositoryError> {
        let row = connector_keys::Entity::find_by_id(key_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(key_from_row).transpose()
    }

    async fn list_by_owner(&self, owner_user_id: &str) -> Result<Vec<ConnectorKey>, RepositoryError> {
        connector_keys::Entity::find()
            .filter(connector_keys::Column::OwnerUserId.eq(owner_user_id))
            .order_by_desc(connector_keys::Column::CreatedAt)
            .order_by_desc(connector_keys::Column::Id)
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(key_from_row)
            .collect()
    }

    async fn find_by_hash(&self, key_hash: &str) -> Result<Option<ConnectorKey>, RepositoryError> {
        let row = connector_keys::Entity::find()
            .filter(connector_keys::Column::KeyHash.eq(key_hash))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(key_from_row).transpose()
    }

    async fn revoke(
        &self,
        key_id: &str,
    ) -> Result<(ConnectorKey, KeyRevokeOutcome), TransitionError<ConnectorKeyError>> {
        for _ in 0..RACE_ATTEMPTS {
            let current = self
                .get(key_id)
                .await?
                .ok_or(TransitionError::Rejected(ConnectorKeyError::NotFound))?;
            let (next, outcome) = current.revoke();
            if next == current {
                return Ok((next, outcome));
            }
            // Compare-and-set on the status that was read.
            let updated = connector_keys::Entity::update_many()
                .col_expr(connector_keys::Column::Status, Expr::value(next.status.as_str()))
                .filter(connector_keys::Column::Id.eq(key_id))
                .filter(connector_keys::Column::Status.eq(current.status.as_str()))
                .exec(&self.db)
                .await
                .map_err(repository_error)?;
            if updated.rows_affected == 1 {
                return Ok((next, outcome));
            }
        }
        Err(contention("connector key").into())
    }

    async fn touch_last_used(&self, key_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError> {
        connector_keys::Entity::update_many()
            .col_expr(connector_keys::Column::LastUsedAt, Expr::value(at))
            .filter(connector_keys::Column::Id.eq(key_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}

fn key_row(key: &ConnectorKey) -> connector_keys::ActiveModel {
    connector_keys::ActiveModel {
        id: Set(key.id.clone()),
        owner_user_id: Set(key.owner_user_id.clone()),
        app_id: Set(key.app_id.clone()),
        name: Set(key.name.as_ref().map(|name| name.as_str().to_owned())),
        api_key_prefix: Set(key.api_key_prefix.clone()),
        key_hash: Set(key.key_hash.clone()),
        status: Set(key.status.as_str().to_owned()),
        created_at: Set(key.created_at),
        last_used_at: Set(key.last_used_at),
        expires_at: Set(key.expires_at),
    }
}

fn key_from_row(row: connector_keys::Model) -> Result<ConnectorKey, RepositoryError> {
    let status = ConnectorKeyStatus::parse(&row.status)
        .ok_or_else(|| corrupt("connector_keys.status", format!("status {:?}", row.status)))?;
    Ok(ConnectorKey {
        id: row.id,
        owner_user_id: row.owner_user_id,
        app_id: row.app_id,
        name: row.name.map(KeyName::from_stored),
        api_key_prefix: row.api_key_prefix,
        key_hash: row.key_hash,
        status,
        created_at: row.created_at,
        last_used_at: row.last_used_at,
        expires_at: row.expires_at,
    })
}
