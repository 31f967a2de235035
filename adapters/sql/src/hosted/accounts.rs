//! `SeaOrmAccountRepository` and `SeaOrmAccountTokenRepository`: hosted accounts and their
//! one-time tokens (migration `m20261210_000001_accounts`; the expiry index the sweep uses,
//! `m20261221_000002_account_tokens_expiry_index`).

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::accounts::{AccountRepository, AccountTokenRepository};
use svc_domain::account::token::{AccountToken, TokenPurpose};
use svc_domain::account::{Account, email_key};
use svc_domain::invite::EmailAddress;

use crate::errors::{corrupt, is_unique_violation, repository_error};

mod account_row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "accounts")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub user_id: String,
        pub email: String,
        pub email_key: String,
        pub password_hash: String,
        pub created_at: DateTimeUtc,
        pub email_verified_at: Option<DateTimeUtc>,
        pub first_sign_in_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

mod token_row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "account_tokens")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub token_hash: String,
        pub user_id: String,
        pub purpose: String,
        pub expires_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

use account_row::{Column as A, Entity as Accounts};
use token_row::{Column as T, Entity as Tokens};

pub struct SeaOrmAccountRepository {
    db: DatabaseConnection,
}

impl SeaOrmAccountRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

fn account(m: account_row::Model) -> Result<Account, RepositoryError> {
    let email =
        EmailAddress::parse(&m.email).map_err(|_| corrupt("accounts.email", svc_domain::text::excerpt(&m.email)))?;
    Ok(Account {
        user_id: m.user_id,
        email,
        password_hash: m.password_hash,
        created_at: m.created_at,
        email_verified_at: m.email_verified_at,
        first_sign_in_at: m.first_sign_in_at,
    })
}

#[async_trait::async_trait]
impl AccountRepository for SeaOrmAccountRepository {
    async fn insert(&self, a: &Account) -> Result<bool, RepositoryError> {
        let row = account_row::ActiveModel {
            user_id: Set(a.user_id.clone()),
            email: Set(a.email.as_str().to_owned()),
            email_key: Set(email_key(&a.email)),
            password_hash: Set(a.password_hash.clone()),
            created_at: Set(a.created_at),
            email_verified_at: Set(a.email_verified_at),
            first_sign_in_at: Set(a.first_sign_in_at),
        };
        match Accounts::insert(row).exec_without_returning(&self.db).await {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(repository_error(e)),
        }
    }

    async fn find_by_email_key(&self, key: &str) -> Result<Option<Account>, RepositoryError> {
        let found = Accounts::find()
            .filter(A::EmailKey.eq(key))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        found.map(account).transpose()
    }

    async fn find_by_id(&self, user_id: &str) -> Result<Option<Account>, RepositoryError> {
        let found = Accounts::find_by_id(user_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        found.map(account).transpose()
    }

    async fn set_password_hash(&self, user_id: &str, password_hash: &str) -> Result<(), RepositoryError> {
        Accounts::update_many()
            .col_expr(A::PasswordHash, Expr::value(password_hash))
            .filter(A::UserId.eq(user_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn mark_email_verified(&self, user_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError> {
        Accounts::update_many()
            .col_expr(A::EmailVerifiedAt, Expr::value(at))
            .filter(A::UserId.eq(user_id))
            .filter(A::EmailVerifiedAt.is_null())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn mark_first_sign_in(&self, user_id: &str, at: DateTime<Utc>) -> Result<bool, RepositoryError> {
        let updated = Accounts::update_many()
            .col_expr(A::FirstSignInAt, Expr::value(at))
            .filter(A::UserId.eq(user_id))
            .filter(A::FirstSignInAt.is_null())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(updated.rows_affected == 1)
    }
}

pub struct SeaOrmAccountTokenRepository {
    db: DatabaseConnection,
}

impl SeaOrmAccountTokenRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl AccountTokenRepository for SeaOrmAccountTokenRepository {
    async fn insert(&self, token: &AccountToken) -> Result<(), RepositoryError> {
        let row = token_row::ActiveModel {
            token_hash: Set(token.token_hash.clone()),
            user_id: Set(token.user_id.clone()),
            purpose: Set(token.purpose.as_str().to_owned()),
            expires_at: Set(token.expires_at),
        };
        Tokens::insert(row)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn take(&self, token_hash: &str, purpose: TokenPurpose) -> Result<Option<AccountToken>, RepositoryError> {
        let of_token = || {
            sea_orm::Condition::all()
                .add(T::TokenHash.eq(token_hash))
                .add(T::Purpose.eq(purpose.as_str()))
        };
        let Some(row) = Tokens::find()
            .filter(of_token())
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(None);
        };
        // The delete is the compare-and-set: of two racing uses, one deletes the row.
        let deleted = Tokens::delete_many()
            .filter(of_token())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        if deleted.rows_affected != 1 {
            return Ok(None);
        }
        Ok(Some(AccountToken {
            token_hash: row.token_hash,
            user_id: row.user_id,
            purpose,
            expires_at: row.expires_at,
        }))
    }

    async fn forget_all(&self, user_id: &str, purpose: TokenPurpose) -> Result<(), RepositoryError> {
        Tokens::delete_many()
            .filter(T::UserId.eq(user_id))
            .filter(T::Purpose.eq(purpose.as_str()))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
    async fn delete_expired(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        // By `ix_account_tokens_expires_at`: only the expired rows are read (and, on MariaDB,
        // locked), never the live ones a use or an insert needs meanwhile.
        let deleted = Tokens::delete_many()
            .filter(T::ExpiresAt.lte(now))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected)
    }
}
