use std::sync::Arc;

use serde::Serialize;
use svc_domain::account::email_key;
use svc_domain::account::token::{TOKEN_CHARS, token_hash};
use svc_domain::invite::{
    EmailAddress, Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome, InviteRole, InviteStatus,
};
use svc_domain::org::{self, Org, OrgError, OrgMembership, OrgMembershipRecord};

use super::INTERNAL_ERROR_CODE;
use super::invite_budget::{InviteBudget, InvitesLimited};
use crate::ports::accounts::AccountRepository;
use crate::ports::operator::{
    InviteLinkRepository, InviteRepository, Mailer, MailerError, OrgRepository, TransitionError,
};
use crate::ports::{BoundedInsert, Clock, Ids, RepositoryError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOrg {
    pub caller_user_id: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteToOrg {
    pub caller_user_id: String,
    pub org_id: String,
    pub email: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokeInvite {
    pub caller_user_id: String,
    pub invite_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptInvite {
    pub user_id: String,
    pub invite_id: String,
}

/// `svc_ops_invite_to_org`'s answer: the invite plus whether an existing one was reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteIssued {
    #[serde(flatten)]
    pub invite: Invite,
    pub reused: bool,
}

/// `svc_ops_revoke_invite`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteRevoked {
    pub invite_id: String,
    pub status: InviteStatus,
    pub already_revoked: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum OrgServiceError {
    #[error(transparent)]
    Org(#[from] OrgError),
    #[error(transparent)]
    Invite(#[from] InviteError),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
    #[error("mail failure")]
    Mail(#[from] MailerError),
    /// The caller sent its hour's invite mails (`hosted.invite_mails_per_hour`).
    #[error(transparent)]
    RateLimited(#[from] InvitesLimited),
    /// The caller owns as many orgs as one account may (`hosted.orgs_per_account`).
    #[error(transparent)]
    OrgLimit(#[from] OwnedOrgsFull),
}

/// An account owning its cap of orgs asked for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("you own {stored} orgs, the most one account may own on this server is {max}")]
pub struct OwnedOrgsFull {
    pub stored: u64,
    pub max: u64,
}

impl OrgServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Org(error) => error.code(),
            Self::Invite(error) => error.code(),
            Self::RateLimited(_) => "rate_limited",
            Self::OrgLimit(_) => "org_limit_reached",
            Self::Storage(_) | Self::Mail(_) => INTERNAL_ERROR_CODE,
        }
    }
}

impl From<TransitionError<InviteError>> for OrgServiceError {
    fn from(error: TransitionError<InviteError>) -> Self {
        match error {
            TransitionError::Rejected(error) => Self::Invite(error),
            TransitionError::Repository(error) => Self::Storage(error),
        }
    }
}

/// The page an invite mail's one-time link opens (served by the HTTP adapter in hosted mode).
pub const INVITE_PATH: &str = "/account/invite";

/// Where invite mails' one-time links point and where their token hashes are kept (hosted
/// mode, where accepting an invite can create the account), and the accounts whose address
/// proves a caller is the invitee.
#[derive(Clone)]
pub struct InviteLinks {
    pub links: Arc<dyn InviteLinkRepository>,
    /// The public base URL links start with (`<base>/account/invite?token=...`).
    pub base_url: String,
    pub accounts: Arc<dyn AccountRepository>,
}

/// Orgs, memberships and invites.
pub struct OrgService {
    orgs: Arc<dyn OrgRepository>,
    invites: Arc<dyn InviteRepository>,
    mailer: Arc<dyn Mailer>,
    links: Option<InviteLinks>,
    /// Hosted: invite mails per account per hour.
    budget: Option<InviteBudget>,
    /// Hosted: orgs one account may own.
    orgs_per_account: Option<u64>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl OrgService {
    pub fn new(
        orgs: Arc<dyn OrgRepository>,
        invites: Arc<dyn InviteRepository>,
        mailer: Arc<dyn Mailer>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            orgs,
            invites,
            mailer,
            links: None,
            budget: None,
            orgs_per_account: None,
            clock,
            ids,
        }
    }

    /// Invites that queue a mail are counted per account and hour (hosted mode).
    pub fn with_invite_budget(self, budget: InviteBudget) -> Self {
        Self {
            budget: Some(budget),
            ..self
        }
    }

    /// The invites of an org the caller administers, newest first, each with its status now (a
    /// pending invite past its expiry is `expired`). A member who is not an owner or admin is
    /// denied; a caller outside the org is told it has none to see.
    pub async fn invites_of(&self, org_id: &str, caller_user_id: &str) -> Result<Vec<Invite>, OrgServiceError> {
        let membership = self.orgs.membership(org_id, caller_user_id).await?;
        org::ensure_administers(membership.as_ref())?;
        let now = self.clock.now();
        let mut invites = self.invites.list_of_org(org_id).await?;
        for invite in &mut invites {
            invite.status = invite.status_at(now);
        }
        Ok(invites)
    }

    /// Invite mails carry a one-time link to `/account/invite` (hosted mode).
    pub fn linking(self, links: InviteLinks) -> Self {
        Self {
            links: Some(links),
            ..self
        }
    }

    /// An account owns at most `max` orgs (hosted mode).
    pub fn with_orgs_per_account(self, max: u64) -> Self {
        Self {
            orgs_per_account: Some(max),
            ..self
        }
    }

    /// The caller's memberships (`svc_ops_list_orgs`).
    pub async fn list_orgs(&self, caller_user_id: &str) -> Result<Vec<OrgMembershipRecord>, OrgServiceError> {
        Ok(self.orgs.list_memberships_of_user(caller_user_id).await?)
    }

    /// Refuses with `org_not_found` unless `user_id` is a member of `org_id` (a missing org
    /// answers the same): reading an org's wallet takes membership, any role.
    pub async fn ensure_member(&self, org_id: &str, user_id: &str) -> Result<(), OrgServiceError> {
        match self.orgs.membership(org_id, user_id).await? {
            Some(_) => Ok(()),
            None => Err(OrgError::NotFound.into()),
        }
    }

    /// Refuses unless `user_id` is an owner or admin of `org_id`: `org_not_found` for a caller
    /// outside the org (a missing org alike), `org_invite_access_denied` for a plain member.
    /// Changing what an org pays with (its provider keys) takes administering it.
    pub async fn ensure_administers(&self, org_id: &str, user_id: &str) -> Result<(), OrgServiceError> {
        let membership = self.orgs.membership(org_id, user_id).await?;
        if membership.is_none() {
            return Err(OrgError::NotFound.into());
        }
        Ok(org::ensure_administers(membership.as_ref())?)
    }

    /// A new org owned by the caller, with its owner membership and an empty wallet; in hosted
    /// mode refused `org_limit_reached` once the caller owns `hosted.orgs_per_account` orgs.
    pub async fn create_org(&self, command: CreateOrg) -> Result<Org, OrgServiceError> {
        let new_org = Org::create(self.ids.ulid(), &command.name, command.caller_user_id, self.clock.now())?;
        match self.orgs_per_account {
            None => self.orgs.create(&new_org).await?,
            Some(max) => match self.orgs.create_bounded(&new_org, max).await? {
                BoundedInsert::Inserted => {}
                BoundedInsert::Full { stored } => return Err(OwnedOrgsFull { stored, max }.into()),
            },
        }
        Ok(new_org.org)
    }

    /// Invites an email address, or reuses the live pending invite of the same (org, email)
    /// without a second email. Only owners and admins may invite.
    ///
    /// The email is queued after the invite is stored; if its link or its mail cannot be
    /// stored, the new invite is revoked and the call fails, so a retry issues a fresh invite and
    /// mails it. A reused invite whose email was never queued (the process stopped between the
    /// two writes) is announced then, so no pending invite stays one nobody was told of.
    pub async fn invite_to_org(&self, command: InviteToOrg) -> Result<InviteIssued, OrgServiceError> {
        let email = EmailAddress::parse(&command.email)?;
        let role = InviteRole::parse(&command.role)?;
        let membership = self.orgs.membership(&command.org_id, &command.caller_user_id).await?;
        org::ensure_administers(membership.as_ref())?;
        let draft = InviteDraft {
            invite_id: self.ids.ulid(),
            org_id: command.org_id,
            email,
            role,
            inviter_user_id: command.caller_user_id,
        };
        let counted = match &self.budget {
            Some(budget) => Some(budget.admit(&draft.inviter_user_id, self.clock.now()).await??),
            None => None,
        };
        let mailed = self.issue(draft).await;
        if let (Some(budget), Some(counted)) = (&self.budget, counted)
            && !matches!(mailed, Ok((_, true)))
        {
            budget.give_back(counted).await;
        }
        let (issue, _) = mailed?;
        Ok(InviteIssued {
            reused: issue.reused(),
            invite: issue.invite().clone(),
        })
    }

    /// Stores (or reuses) the invite and queues its mail where one is due; whether a mail was
    /// queued.
    async fn issue(&self, draft: InviteDraft) -> Result<(InviteIssue, bool), OrgServiceError> {
        let issue = self.invites.create_or_reuse(draft, self.clock.now()).await?;
        let mailed = match &issue {
            InviteIssue::Created { invite, .. } => {
                if let Err(error) = self.announce(invite).await {
                    if let Err(cause) = self.invites.revoke(&invite.invite_id, self.clock.now()).await {
                        tracing::error!(error = ?cause, invite_id = %invite.invite_id, "an unannounced invite could not be revoked");
                    }
                    return Err(error);
                }
                true
            }
            InviteIssue::Reused(invite) => {
                let unannounced = !self.mailer.invite_queued(&invite.invite_id).await?;
                if unannounced {
                    self.announce(invite).await?;
                }
                unannounced
            }
        };
        Ok((issue, mailed))
    }

    /// The new invite's link and mail.
    async fn announce(&self, invite: &Invite) -> Result<(), OrgServiceError> {
        let accept_url = self.issue_link(invite).await?;
        self.mailer.send_invite(invite, accept_url.as_deref()).await?;
        Ok(())
    }

    /// A fresh one-time link for `invite`, its token's hash stored; `None` without links.
    async fn issue_link(&self, invite: &Invite) -> Result<Option<String>, OrgServiceError> {
        let Some(links) = &self.links else {
            return Ok(None);
        };
        let token = self.ids.base62(TOKEN_CHARS);
        links
            .links
            .insert(&token_hash(&token), &invite.invite_id, self.clock.now())
            .await?;
        Ok(Some(format!(
            "{}{INVITE_PATH}?token={token}",
            links.base_url.trim_end_matches('/')
        )))
    }

    /// Revokes an invite by compare-and-set. A caller outside the invite's org is told the
    /// invite does not exist; a plain member is denied.
    pub async fn revoke_invite(&self, command: RevokeInvite) -> Result<InviteRevoked, OrgServiceError> {
        let invite = self
            .invites
            .get(&command.invite_id)
            .await?
            .ok_or(InviteError::NotFound)?;
        match self.orgs.membership(&invite.org_id, &command.caller_user_id).await? {
            None => return Err(InviteError::NotFound.into()),
            Some(membership) => org::ensure_administers(Some(&membership))?,
        }
        let (stored, outcome) = self.invites.revoke(&command.invite_id, self.clock.now()).await?;
        Ok(InviteRevoked {
            invite_id: stored.invite_id,
            status: stored.status,
            already_revoked: outcome == InviteRevokeOutcome::AlreadyRevoked,
        })
    }

    /// `POST /_svc/invites/{inviteId}/accept`. On a hosted server (invite links wired) the
    /// caller must show the invite's link token or be the invitee (their account's address is
    /// the invited one); anyone else is told the invite does not exist, whatever its state. A
    /// self-hosted server's invite mail carries the invite id only: holding it entitles.
    pub async fn accept_invite_as_caller(
        &self,
        command: AcceptInvite,
        token: Option<&str>,
    ) -> Result<OrgMembership, OrgServiceError> {
        if let Some(links) = &self.links
            && !self.is_invitee(links, &command, token).await?
        {
            return Err(InviteError::NotFound.into());
        }
        self.accept_invite(command).await
    }

    async fn is_invitee(
        &self,
        links: &InviteLinks,
        command: &AcceptInvite,
        token: Option<&str>,
    ) -> Result<bool, OrgServiceError> {
        let Some(invite) = self.invites.get(&command.invite_id).await? else {
            return Ok(false);
        };
        Ok(match token.map(str::trim).filter(|t| !t.is_empty()) {
            Some(token) => {
                links.links.invite_of(&token_hash(token)).await?.as_deref() == Some(invite.invite_id.as_str())
            }
            // The address must be proven: an account anyone could sign up with an invitee's
            // address (open sign-up) is not the invitee until the mailbox confirmed it.
            None => links
                .accounts
                .find_by_id(&command.user_id)
                .await?
                .is_some_and(|account| {
                    account.email_verified_at.is_some() && account.email_key() == email_key(&invite.email)
                }),
        })
    }

    /// Accepts an invite for `user_id`, who becomes a member with the invited role. Holding the
    /// invite id (the emailed link) is what entitles the user to accept.
    pub async fn accept_invite(&self, command: AcceptInvite) -> Result<OrgMembership, OrgServiceError> {
        let (_, membership) = self
            .invites
            .accept(&command.invite_id, &command.user_id, self.clock.now())
            .await?;
        Ok(membership)
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests;
