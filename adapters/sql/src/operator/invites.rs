use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{InviteRepository, TransitionError};
use svc_domain::invite::{
    EmailAddress, Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome, InviteRole, InviteStatus,
};
use svc_domain::org::OrgMembership;

use super::entities::{org_invites, org_memberships};
use super::orgs::{membership_from_row, membership_row};
use crate::errors::{RACE_ATTEMPTS, begin_write, contention, corrupt, inconsistent, repository_error};

pub struct SeaOrmInviteRepository {
    db: DatabaseConnection,
}

impl SeaOrmInviteRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    /// One attempt at issuing. `Conflict` means a racing inviter inserted the pending invite of
    /// the same pair first (the partial unique index refused ours): retrying reuses theirs.
    async fn try_create_or_reuse(
        &self,
        draft: &InviteDraft,
        now: DateTime<Utc>,
    ) -> Result<InviteIssue, RepositoryError> {
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        let existing = org_invites::Entity::find()
            .filter(org_invites::Column::OrgId.eq(draft.org_id.as_str()))
            .filter(org_invites::Column::Email.eq(draft.email.as_str()))
            .filter(org_invites::Column::Status.eq(InviteStatus::Pending.as_str()))
            .lock_exclusive()
            .one(&txn)
            .await
            .map_err(repository_error)?
            .map(invite_from_row)
            .transpose()?;
        let issue = Invite::issue(existing, draft.clone(), now);
        if let InviteIssue::Created { invite, superseded } = &issue {
            if let Some(expired) = superseded
                && !replace_if_status(&txn, expired, InviteStatus::Pending).await?
            {
                return Err(contention("invite"));
            }
            org_invites::Entity::insert(invite_row(invite))
                .exec_without_returning(&txn)
                .await
                .map_err(repository_error)?;
        }
        txn.commit().await.map_err(repository_error)?;
        Ok(issue)
    }

    async fn load(
        &self,
        conn: &impl ConnectionTrait,
        invite_id: &str,
        lock: bool,
    ) -> Result<Option<Invite>, RepositoryError> {
        let mut query = org_invites::Entity::find_by_id(invite_id.to_owned());
        if lock {
            query = query.lock_exclusive();
        }
        query
            .one(conn)
            .await
            .map_err(repository_error)?
            .map(invite_from_row)
            .transpose()
    }
}

#[async_trait::async_trait]
impl InviteRepository for SeaOrmInviteRepository {
    async fn create_or_reuse(&self, draft: InviteDraft, now: DateTime<Utc>) -> Result<InviteIssue, RepositoryError> {
        for _ in 0..RACE_ATTEMPTS {
            match self.try_create_or_reuse(&draft, now).await {
                Err(RepositoryError::Conflict(_)) => continue,
                other => return other,
            }
        }
        Err(contention("invite"))
    }

    async fn get(&self, invite_id: &str) -> Result<Option<Invite>, RepositoryError> {
        self.load(&self.db, invite_id, false).await
    }

    async fn list_of_org(&self, org_id: &str) -> Result<Vec<Invite>, RepositoryError> {
        org_invites::Entity::find()
            .filter(org_invites::Column::OrgId.eq(org_id))
            .order_by_desc(org_invites::Column::CreatedAt)
            .order_by_desc(org_invites::Column::Id)
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(invite_from_row)
            .collect()
    }

    async fn revoke(
        &self,
        invite_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, InviteRevokeOutcome), TransitionError<InviteError>> {
        for _ in 0..RACE_ATTEMPTS {
            let current = self
                .load(&self.db, invite_id, false)
                .await?
                .ok_or(TransitionError::Rejected(InviteError::NotFound))?;
            let (next, outcome) = current.revoke(now).map_err(TransitionError::Rejected)?;
            if next == current || replace_if_status(&self.db, &next, current.status).await? {
                return Ok((next, outcome));
            }
        }
        Err(contention("invite").into())
    }

    async fn accept(
        &self,
        invite_id: &str,
        user_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, OrgMembership), TransitionError<InviteError>> {
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        let current = self
            .load(&txn, invite_id, true)
            .await?
            .ok_or(TransitionError::Rejected(InviteError::NotFound))?;
        let (accepted, membership) = current.accept(user_id, now).map_err(TransitionError::Rejected)?;
        if !replace_if_status(&txn, &accepted, current.status).await? {
            return Err(contention("invite").into());
        }
        // An existing member keeps the membership (and role) they have.
        org_memberships::Entity::insert(membership_row(&membership))
            .on_conflict_do_nothing()
            .exec_without_returning(&txn)
            .await
            .map_err(repository_error)?;
        let kept = org_memberships::Entity::find_by_id((membership.org_id.clone(), membership.user_id.clone()))
            .one(&txn)
            .await
            .map_err(repository_error)?
            .ok_or_else(|| inconsistent("org_memberships", "membership vanished inside its transaction"))?;
        let kept = membership_from_row(kept)?;
        txn.commit().await.map_err(repository_error)?;
        Ok((accepted, kept))
    }
}

/// Compare-and-set: stores `next` only if the row still has `expected` status. `false` when a
/// concurrent writer changed it first.
async fn replace_if_status(
    conn: &impl ConnectionTrait,
    next: &Invite,
    expected: InviteStatus,
) -> Result<bool, RepositoryError> {
    let changes = org_invites::ActiveModel {
        id: NotSet,
        org_id: NotSet,
        email: NotSet,
        role: NotSet,
        inviter_user_id: NotSet,
        status: Set(next.status.as_str().to_owned()),
        expires_at: NotSet,
        created_at: NotSet,
        accepted_at: Set(next.accepted_at),
        accepted_by_user_id: Set(next.accepted_by_user_id.clone()),
        revoked_at: Set(next.revoked_at),
    };
    let updated = org_invites::Entity::update_many()
        .set(changes)
        .filter(org_invites::Column::Id.eq(next.invite_id.as_str()))
        .filter(org_invites::Column::Status.eq(expected.as_str()))
        .exec(conn)
        .await
        .map_err(repository_error)?;
    Ok(updated.rows_affected == 1)
}

fn invite_row(invite: &Invite) -> org_invites::ActiveModel {
    org_invites::ActiveModel {
        id: Set(invite.invite_id.clone()),
        org_id: Set(invite.org_id.clone()),
        email: Set(invite.email.as_str().to_owned()),
        role: Set(invite.role.as_str().to_owned()),
        inviter_user_id: Set(invite.inviter_user_id.clone()),
        status: Set(invite.status.as_str().to_owned()),
        expires_at: Set(invite.expires_at),
        created_at: Set(invite.created_at),
        accepted_at: Set(invite.accepted_at),
        accepted_by_user_id: Set(invite.accepted_by_user_id.clone()),
        revoked_at: Set(invite.revoked_at),
    }
}

fn invite_from_row(row: org_invites::Model) -> Result<Invite, RepositoryError> {
    Ok(Invite {
        email: EmailAddress::parse(&row.email).map_err(|error| corrupt("org_invites.email", error))?,
        role: InviteRole::parse(&row.role).map_err(|error| corrupt("org_invites.role", error))?,
        status: InviteStatus::parse(&row.status)
            .ok_or_else(|| corrupt("org_invites.status", format!("status {:?}", row.status)))?,
        invite_id: row.id,
        org_id: row.org_id,
        inviter_user_id: row.inviter_user_id,
        expires_at: row.expires_at,
        created_at: row.created_at,
        accepted_at: row.accepted_at,
        accepted_by_user_id: row.accepted_by_user_id,
        revoked_at: row.revoked_at,
    })
}
