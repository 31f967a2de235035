use std::collections::HashMap;

use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder,
};
use svc_application::ports::operator::OrgRepository;
use svc_application::ports::{BoundedInsert, RepositoryError};
use svc_domain::org::{NewOrg, Org, OrgMembership, OrgMembershipRecord, OrgName, OrgRole};

use super::entities::{org_memberships, orgs};
use super::wallets::insert_wallet;
use crate::errors::{begin_write, corrupt, inconsistent, repository_error};
use crate::write_guards::WriteGuard;

pub struct SeaOrmOrgRepository {
    db: DatabaseConnection,
}

impl SeaOrmOrgRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl OrgRepository for SeaOrmOrgRepository {
    async fn create(&self, new_org: &NewOrg) -> Result<(), RepositoryError> {
        // Any failure drops the transaction, which rolls back the rows written so far.
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        insert_org(&txn, new_org).await?;
        txn.commit().await.map_err(repository_error)
    }

    async fn create_bounded(&self, new_org: &NewOrg, max_owned: u64) -> Result<BoundedInsert, RepositoryError> {
        let owner = new_org.owner_membership.user_id.as_str();
        let txn = WriteGuard::orgs_of(owner)
            .begin(&self.db, new_org.org.created_at)
            .await
            .map_err(repository_error)?;
        let stored = org_memberships::Entity::find()
            .filter(org_memberships::Column::UserId.eq(owner))
            .filter(org_memberships::Column::Role.eq(OrgRole::Owner.as_str()))
            .count(&txn)
            .await
            .map_err(repository_error)?;
        if stored >= max_owned {
            // Dropping the transaction rolls it back and lets the next writer in.
            return Ok(BoundedInsert::Full { stored });
        }
        insert_org(&txn, new_org).await?;
        txn.commit().await.map_err(repository_error)?;
        Ok(BoundedInsert::Inserted)
    }

    async fn get(&self, org_id: &str) -> Result<Option<Org>, RepositoryError> {
        let row = orgs::Entity::find_by_id(org_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(org_from_row).transpose()
    }

    async fn membership(&self, org_id: &str, user_id: &str) -> Result<Option<OrgMembership>, RepositoryError> {
        let row = org_memberships::Entity::find_by_id((org_id.to_owned(), user_id.to_owned()))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(membership_from_row).transpose()
    }

    async fn list_memberships_of_user(&self, user_id: &str) -> Result<Vec<OrgMembershipRecord>, RepositoryError> {
        let memberships = org_memberships::Entity::find()
            .filter(org_memberships::Column::UserId.eq(user_id))
            .order_by_asc(org_memberships::Column::JoinedAt)
            .order_by_asc(org_memberships::Column::OrgId)
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        let org_ids = memberships.iter().map(|m| m.org_id.clone()).collect::<Vec<_>>();
        let orgs = orgs::Entity::find()
            .filter(orgs::Column::Id.is_in(org_ids))
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(|row| org_from_row(row).map(|org| (org.org_id.clone(), org)))
            .collect::<Result<HashMap<_, _>, _>>()?;
        memberships
            .into_iter()
            .map(|row| {
                let membership = membership_from_row(row)?;
                let org = orgs
                    .get(&membership.org_id)
                    .ok_or_else(|| inconsistent("org_memberships", "org is missing"))?;
                Ok(org.membership_record(&membership))
            })
            .collect()
    }
}

fn org_row(org: &Org) -> orgs::ActiveModel {
    orgs::ActiveModel {
        id: Set(org.org_id.clone()),
        name: Set(org.name.as_str().to_owned()),
        owner_user_id: Set(org.owner_user_id.clone()),
        created_at: Set(org.created_at),
        updated_at: Set(org.updated_at),
    }
}

fn org_from_row(row: orgs::Model) -> Result<Org, RepositoryError> {
    let name = OrgName::parse(&row.name).map_err(|error| corrupt("orgs.name", error))?;
    Ok(Org {
        org_id: row.id,
        name,
        owner_user_id: row.owner_user_id,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The org, its owner membership and its wallet, inside `txn`.
async fn insert_org(txn: &DatabaseTransaction, new_org: &NewOrg) -> Result<(), RepositoryError> {
    orgs::Entity::insert(org_row(&new_org.org))
        .exec_without_returning(txn)
        .await
        .map_err(repository_error)?;
    org_memberships::Entity::insert(membership_row(&new_org.owner_membership))
        .exec_without_returning(txn)
        .await
        .map_err(repository_error)?;
    insert_wallet(txn, &new_org.wallet).await
}

pub(super) fn membership_row(membership: &OrgMembership) -> org_memberships::ActiveModel {
    org_memberships::ActiveModel {
        org_id: Set(membership.org_id.clone()),
        user_id: Set(membership.user_id.clone()),
        role: Set(membership.role.as_str().to_owned()),
        joined_at: Set(membership.joined_at),
    }
}

pub(super) fn membership_from_row(row: org_memberships::Model) -> Result<OrgMembership, RepositoryError> {
    let role =
        OrgRole::parse(&row.role).ok_or_else(|| corrupt("org_memberships.role", format!("role {:?}", row.role)))?;
    Ok(OrgMembership {
        org_id: row.org_id,
        user_id: row.user_id,
        role,
        joined_at: row.joined_at,
    })
}
