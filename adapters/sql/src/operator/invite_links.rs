//! `SeaOrmInviteLinkRepository`: the sha256 of each invite mail's one-time token
//! (`org_invite_links`, migration `m20261215_000001_org_invite_links`).

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, EntityTrait, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::InviteLinkRepository;

use crate::errors::repository_error;

mod row {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "org_invite_links")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub token_hash: String,
        pub invite_id: String,
        pub created_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub struct SeaOrmInviteLinkRepository {
    db: DatabaseConnection,
}

impl SeaOrmInviteLinkRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl InviteLinkRepository for SeaOrmInviteLinkRepository {
    async fn insert(
        &self,
        token_hash: &str,
        invite_id: &str,
        created_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        let link = row::ActiveModel {
            token_hash: Set(token_hash.to_owned()),
            invite_id: Set(invite_id.to_owned()),
            created_at: Set(created_at),
        };
        row::Entity::insert(link)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn invite_of(&self, token_hash: &str) -> Result<Option<String>, RepositoryError> {
        let found = row::Entity::find_by_id(token_hash.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(found.map(|link| link.invite_id))
    }
}
