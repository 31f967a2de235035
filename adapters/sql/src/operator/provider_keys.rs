//! `ProviderKeyRepository` on sea-orm: one row per (owner, provider), sealed; hex for the bytes
//! so both backends store plain text.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use svc_application::ports::RepositoryError;
use svc_application::ports::hosted::{ProviderKeyRepository, StoredProviderKey};
use svc_domain::provider_key::{Provider, SealedSecret};
use svc_domain::wallet::Principal;

use super::entities::provider_keys::{ActiveModel, Column, Entity, Model};
use super::wallets::principal_from_row;
use crate::errors::{corrupt, repository_error};

pub struct SeaOrmProviderKeyRepository {
    db: DatabaseConnection,
}

impl SeaOrmProviderKeyRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

fn of_owner(owner: &Principal, provider: Provider) -> sea_orm::Condition {
    sea_orm::Condition::all()
        .add(Column::PrincipalType.eq(owner.principal_type.as_str()))
        .add(Column::PrincipalId.eq(owner.principal_id.as_str()))
        .add(Column::Provider.eq(provider.as_str()))
}

#[async_trait::async_trait]
impl ProviderKeyRepository for SeaOrmProviderKeyRepository {
    async fn put(&self, key: &StoredProviderKey) -> Result<(), RepositoryError> {
        Entity::insert(row(key))
            .on_conflict(
                OnConflict::columns([Column::PrincipalType, Column::PrincipalId, Column::Provider])
                    .update_columns([
                        Column::Label,
                        Column::LastFour,
                        Column::MasterKeyId,
                        Column::SaltHex,
                        Column::CiphertextHex,
                        Column::CreatedAt,
                        Column::LastUsedAt,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn get(&self, owner: &Principal, provider: Provider) -> Result<Option<StoredProviderKey>, RepositoryError> {
        let found = Entity::find()
            .filter(of_owner(owner, provider))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        found.map(stored).transpose()
    }

    async fn list(&self, owner: &Principal) -> Result<Vec<StoredProviderKey>, RepositoryError> {
        let rows = Entity::find()
            .filter(Column::PrincipalType.eq(owner.principal_type.as_str()))
            .filter(Column::PrincipalId.eq(owner.principal_id.as_str()))
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        let mut keys = rows.into_iter().map(stored).collect::<Result<Vec<_>, _>>()?;
        keys.sort_by_key(|k| k.provider);
        Ok(keys)
    }

    async fn delete(&self, owner: &Principal, provider: Provider) -> Result<bool, RepositoryError> {
        let deleted = Entity::delete_many()
            .filter(of_owner(owner, provider))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected > 0)
    }

    async fn touch_last_used(
        &self,
        owner: &Principal,
        provider: Provider,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        Entity::update_many()
            .col_expr(Column::LastUsedAt, sea_orm::sea_query::Expr::value(at))
            .filter(of_owner(owner, provider))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn sealed_under_other_keys(&self, key_id: &str) -> Result<Vec<StoredProviderKey>, RepositoryError> {
        let rows = Entity::find()
            .filter(Column::MasterKeyId.ne(key_id))
            .order_by_asc(Column::PrincipalId)
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        rows.into_iter().map(stored).collect()
    }

    async fn reseal(
        &self,
        owner: &Principal,
        provider: Provider,
        previous: &SealedSecret,
        next: &SealedSecret,
    ) -> Result<bool, RepositoryError> {
        let updated = Entity::update_many()
            .col_expr(
                Column::MasterKeyId,
                sea_orm::sea_query::Expr::value(next.key_id.clone()),
            )
            .col_expr(
                Column::SaltHex,
                sea_orm::sea_query::Expr::value(hex::encode(&next.salt)),
            )
            .col_expr(
                Column::CiphertextHex,
                sea_orm::sea_query::Expr::value(hex::encode(&next.ciphertext)),
            )
            .filter(of_owner(owner, provider))
            .filter(Column::CiphertextHex.eq(hex::encode(&previous.ciphertext)))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(updated.rows_affected == 1)
    }
}

fn row(key: &StoredProviderKey) -> ActiveModel {
    ActiveModel {
        principal_type: Set(key.owner.principal_type.as_str().to_owned()),
        principal_id: Set(key.owner.principal_id.clone()),
        provider: Set(key.provider.as_str().to_owned()),
        label: Set(key.label.clone()),
        last_four: Set(key.last_four.clone()),
        master_key_id: Set(key.sealed.key_id.clone()),
        salt_hex: Set(hex::encode(&key.sealed.salt)),
        ciphertext_hex: Set(hex::encode(&key.sealed.ciphertext)),
        created_at: Set(key.created_at),
        last_used_at: Set(key.last_used_at),
    }
}

fn stored(row: Model) -> Result<StoredProviderKey, RepositoryError> {
    let provider = Provider::parse(&row.provider)
        .ok_or_else(|| corrupt("provider_keys.provider", format!("provider {:?}", row.provider)))?;
    let bytes = |column, hex_text: &str| hex::decode(hex_text).map_err(|e| corrupt(column, e));
    Ok(StoredProviderKey {
        owner: principal_from_row(&row.principal_type, row.principal_id, "provider_keys.principal_type")?,
        provider,
        label: row.label,
        last_four: row.last_four,
        sealed: SealedSecret {
            key_id: row.master_key_id,
            salt: bytes("provider_keys.salt_hex", &row.salt_hex)?,
            ciphertext: bytes("provider_keys.ciphertext_hex", &row.ciphertext_hex)?,
        },
        created_at: row.created_at,
        last_used_at: row.last_used_at,
    })
}
