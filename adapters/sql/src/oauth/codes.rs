use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use svc_application::ports::RepositoryError;
use svc_application::ports::oauth::{AuthorizationCodeRepository, CodeConsumption};
use svc_domain::oauth::{AuthorizationCode, CodeBinding, CodeChallenge, KeyGrant};

use super::entities::oauth_authorization_codes as codes;
use crate::errors::repository_error;

pub struct SeaOrmAuthorizationCodeRepository {
    db: DatabaseConnection,
}

impl SeaOrmAuthorizationCodeRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl AuthorizationCodeRepository for SeaOrmAuthorizationCodeRepository {
    async fn insert(&self, code: &AuthorizationCode) -> Result<(), RepositoryError> {
        let row = codes::ActiveModel {
            code_hash: Set(code.code_hash.clone()),
            client_id: Set(code.binding.client_id.clone()),
            redirect_uri: Set(code.binding.redirect_uri.clone()),
            code_challenge: Set(code.binding.code_challenge.as_str().to_owned()),
            resource: Set(code.binding.resource.clone()),
            key_id: Set(code.key.key_id.clone()),
            key_owner_id: Set(code.key.owner_id.clone()),
            sealed_token: Set(code.sealed_token.clone()),
            issued_at: Set(code.issued_at),
            expires_at: Set(code.expires_at),
            consumed_at: Set(code.consumed_at),
        };
        codes::Entity::insert(row)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn consume(&self, code_hash: &str, now: DateTime<Utc>) -> Result<CodeConsumption, RepositoryError> {
        let Some(row) = codes::Entity::find_by_id(code_hash.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(CodeConsumption::Unknown);
        };
        let code = code_from_row(row);
        if code.consume(now).is_err() {
            return Ok(CodeConsumption::Replayed(code));
        }
        // Compare-and-set on "not consumed yet": of racing redemptions exactly one wins.
        let updated = codes::Entity::update_many()
            .col_expr(codes::Column::ConsumedAt, Expr::value(now))
            .filter(codes::Column::CodeHash.eq(code_hash))
            .filter(codes::Column::ConsumedAt.is_null())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(if updated.rows_affected == 1 {
            CodeConsumption::Consumed(code)
        } else {
            CodeConsumption::Replayed(code)
        })
    }

    async fn settle_unredeemed(&self, now: DateTime<Utc>, limit: u64) -> Result<Vec<KeyGrant>, RepositoryError> {
        let expired = codes::Entity::find()
            .filter(codes::Column::ConsumedAt.is_null())
            .filter(codes::Column::ExpiresAt.lte(now))
            .order_by_asc(codes::Column::ExpiresAt)
            .limit(limit)
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        let mut settled = Vec::with_capacity(expired.len());
        for row in expired {
            // The same compare-and-set as a redemption: a sweep on another replica, or a late
            // redemption, that got here first keeps the code.
            let updated = codes::Entity::update_many()
                .col_expr(codes::Column::ConsumedAt, Expr::value(now))
                .filter(codes::Column::CodeHash.eq(row.code_hash.as_str()))
                .filter(codes::Column::ConsumedAt.is_null())
                .exec(&self.db)
                .await
                .map_err(repository_error)?;
            if updated.rows_affected == 1 {
                settled.push(KeyGrant {
                    key_id: row.key_id,
                    owner_id: row.key_owner_id,
                });
            }
        }
        Ok(settled)
    }

    async fn forget_expired(&self, before: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let deleted = codes::Entity::delete_many()
            .filter(codes::Column::ExpiresAt.lt(before))
            .filter(codes::Column::ConsumedAt.is_not_null())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected)
    }
}

fn code_from_row(row: codes::Model) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: row.code_hash,
        binding: CodeBinding {
            client_id: row.client_id,
            redirect_uri: row.redirect_uri,
            code_challenge: CodeChallenge::from_stored(row.code_challenge),
            resource: row.resource,
        },
        key: KeyGrant {
            key_id: row.key_id,
            owner_id: row.key_owner_id,
        },
        sealed_token: row.sealed_token,
        issued_at: row.issued_at,
        expires_at: row.expires_at,
        consumed_at: row.consumed_at,
    }
}
