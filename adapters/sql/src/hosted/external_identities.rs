//! `SeaOrmExternalIdentities` and `SeaOrmPendingExternalSignIns`: identities of an external
//! OpenID Connect provider linked to accounts, and the sign-ins under way (migration
//! `m20261215_000003_external_identities`).

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::external_identity::{
    ExternalIdentityRepository, PendingExternalSignIn, PendingExternalSignIns,
};

use crate::errors::{is_unique_violation, repository_error};

mod identity_row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "account_identities")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub issuer: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub subject: String,
        pub user_id: String,
        pub created_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

mod pending_row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "external_sign_ins")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub state_hash: String,
        pub browser_hash: String,
        pub nonce: String,
        pub pkce_verifier: String,
        pub request_json: String,
        pub client_address: Option<String>,
        pub expires_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

use identity_row::{Column as I, Entity as Identities};
use pending_row::{Column as P, Entity as Pending};

pub struct SeaOrmExternalIdentities {
    db: DatabaseConnection,
}

impl SeaOrmExternalIdentities {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl ExternalIdentityRepository for SeaOrmExternalIdentities {
    async fn find_user(&self, issuer: &str, subject: &str) -> Result<Option<String>, RepositoryError> {
        let found = Identities::find()
            .filter(I::Issuer.eq(issuer))
            .filter(I::Subject.eq(subject))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(found.map(|row| row.user_id))
    }

    async fn link(
        &self,
        issuer: &str,
        subject: &str,
        user_id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, RepositoryError> {
        let row = identity_row::ActiveModel {
            issuer: Set(issuer.to_owned()),
            subject: Set(subject.to_owned()),
            user_id: Set(user_id.to_owned()),
            created_at: Set(at),
        };
        match Identities::insert(row).exec_without_returning(&self.db).await {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(repository_error(e)),
        }
    }
}

pub struct SeaOrmPendingExternalSignIns {
    db: DatabaseConnection,
}

impl SeaOrmPendingExternalSignIns {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl PendingExternalSignIns for SeaOrmPendingExternalSignIns {
    async fn insert(&self, p: &PendingExternalSignIn) -> Result<(), RepositoryError> {
        // Abandoned sign-ins are cleared as new ones start.
        Pending::delete_many()
            .filter(P::ExpiresAt.lt(Utc::now()))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        let row = pending_row::ActiveModel {
            state_hash: Set(p.state_hash.clone()),
            browser_hash: Set(p.browser_hash.clone()),
            nonce: Set(p.nonce.clone()),
            pkce_verifier: Set(p.pkce_verifier.clone()),
            request_json: Set(p.request_json.clone()),
            client_address: Set(p.client_address.clone()),
            expires_at: Set(p.expires_at),
        };
        Pending::insert(row)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn take(&self, state_hash: &str) -> Result<Option<PendingExternalSignIn>, RepositoryError> {
        let Some(row) = Pending::find_by_id(state_hash.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(None);
        };
        // The delete is the compare-and-set: of two racing returns, one deletes the row.
        let deleted = Pending::delete_many()
            .filter(P::StateHash.eq(state_hash))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        if deleted.rows_affected != 1 {
            return Ok(None);
        }
        Ok(Some(PendingExternalSignIn {
            state_hash: row.state_hash,
            browser_hash: row.browser_hash,
            nonce: row.nonce,
            pkce_verifier: row.pkce_verifier,
            request_json: row.request_json,
            client_address: row.client_address,
            expires_at: row.expires_at,
        }))
    }
}
