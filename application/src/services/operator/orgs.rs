use std::sync::Arc;

use serde::Serialize;
use svc_domain::account::email_key;
use svc_domain::account::token::{TOKEN_CHARS, token_hash};
use svc_domain::invite::{
    EmailAddress, Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome, InviteRole, InviteStatus,
};
use svc_domain::org::{self, Org, OrgError, OrgMembership, OrgMembershipRecord};

use super::INTERNAL_ERROR_CODE;
use crate::ports::accounts::AccountRepository;
use crate::ports::operator::{
    InviteLinkRepository, InviteRepository, Mailer, MailerError, OrgRepository, TransitionError,
};
use crate::ports::{Clock, Ids, RepositoryError};

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
}

impl OrgServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Org(error) => error.code(),
            Self::Invite(error) => error.code(),
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
            clock,
            ids,
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

    /// A new org owned by the caller, with its owner membership and an empty wallet.
    pub async fn create_org(&self, command: CreateOrg) -> Result<Org, OrgServiceError> {
        let new_org = Org::create(self.ids.ulid(), &command.name, command.caller_user_id, self.clock.now())?;
        self.orgs.create(&new_org).await?;
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
        let issue = self.invites.create_or_reuse(draft, self.clock.now()).await?;
        match &issue {
            InviteIssue::Created { invite, .. } => {
                if let Err(error) = self.announce(invite).await {
                    if let Err(cause) = self.invites.revoke(&invite.invite_id, self.clock.now()).await {
                        tracing::error!(error = ?cause, invite_id = %invite.invite_id, "an unannounced invite could not be revoked");
                    }
                    return Err(error);
                }
            }
            InviteIssue::Reused(invite) => {
                if !self.mailer.invite_queued(&invite.invite_id).await? {
                    self.announce(invite).await?;
                }
            }
        }
        Ok(InviteIssued {
            reused: issue.reused(),
            invite: issue.invite().clone(),
        })
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
            None => links
                .accounts
                .find_by_id(&command.user_id)
                .await?
                .is_some_and(|account| account.email_key() == email_key(&invite.email)),
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
mod tests {
    use chrono::TimeDelta;
    use svc_domain::invite::INVITE_LIFETIME;
    use svc_domain::org::OrgRole;
    use svc_domain::wallet::Principal;

    use super::*;
    use crate::testing::OperatorFakes;

    async fn org_with_owner(fakes: &OperatorFakes) -> (OrgService, Org) {
        let service = fakes.org_service();
        let org = service
            .create_org(CreateOrg {
                caller_user_id: "owner".into(),
                name: "Acme".into(),
            })
            .await
            .unwrap();
        (service, org)
    }

    fn invite(org: &Org, caller: &str, email: &str, role: &str) -> InviteToOrg {
        InviteToOrg {
            caller_user_id: caller.into(),
            org_id: org.org_id.clone(),
            email: email.into(),
            role: role.into(),
        }
    }

    #[tokio::test]
    async fn creating_an_org_makes_the_caller_owner_with_an_empty_wallet() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let listed = service.list_orgs("owner").await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].role, OrgRole::Owner);
        assert_eq!(listed[0].name.as_str(), "Acme");
        let wallet = fakes.store.wallet(&Principal::org(org.org_id.clone())).unwrap();
        assert_eq!(wallet.balance_cents, 0);
        assert!(service.list_orgs("stranger").await.unwrap().is_empty());
        let error = service
            .create_org(CreateOrg {
                caller_user_id: "u".into(),
                name: " ".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_org_name");
    }

    #[tokio::test]
    async fn inviting_twice_reuses_the_pending_invite_and_sends_one_email() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let first = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        assert!(!first.reused);
        assert_eq!(first.invite.status, InviteStatus::Pending);
        let second = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "admin"))
            .await
            .unwrap();
        assert!(second.reused);
        assert_eq!(second.invite.invite_id, first.invite.invite_id);
        assert_eq!(fakes.mailer.sent_invite_ids(), vec![first.invite.invite_id.clone()]);
        let wire = serde_json::to_value(&second).unwrap();
        assert_eq!(wire["reused"], true);
        assert_eq!(wire["inviteId"], first.invite.invite_id.as_str());
    }

    #[tokio::test]
    async fn an_expired_pending_invite_is_replaced_and_emailed_again() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let first = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        fakes.clock.advance(INVITE_LIFETIME + TimeDelta::seconds(1));
        let second = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        assert!(!second.reused);
        assert_ne!(second.invite.invite_id, first.invite.invite_id);
        assert_eq!(fakes.mailer.sent_invite_ids().len(), 2);
    }

    #[tokio::test]
    async fn only_owners_and_admins_invite() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let to_member = service
            .invite_to_org(invite(&org, "owner", "m@example.com", "member"))
            .await
            .unwrap();
        service
            .accept_invite(AcceptInvite {
                user_id: "member".into(),
                invite_id: to_member.invite.invite_id,
            })
            .await
            .unwrap();
        let to_admin = service
            .invite_to_org(invite(&org, "owner", "a@example.com", "admin"))
            .await
            .unwrap();
        service
            .accept_invite(AcceptInvite {
                user_id: "admin".into(),
                invite_id: to_admin.invite.invite_id,
            })
            .await
            .unwrap();

        let rows = [
            ("admin", "x@example.com", "member", Ok(())),
            ("member", "y@example.com", "member", Err("org_invite_access_denied")),
            ("stranger", "y@example.com", "member", Err("org_invite_access_denied")),
            ("owner", "y@example.com", "owner", Err("invalid_invite_role")),
            ("owner", "not an email", "member", Err("invalid_email")),
        ];
        for (caller, email, role, expected) in rows {
            let result = service
                .invite_to_org(invite(&org, caller, email, role))
                .await
                .map(|_| ());
            assert_eq!(result.map_err(|e| e.code()), expected, "{caller} {email} {role}");
        }
        let unknown_org = InviteToOrg {
            org_id: "nope".into(),
            ..invite(&org, "owner", "z@example.com", "member")
        };
        assert_eq!(
            service.invite_to_org(unknown_org).await.unwrap_err().code(),
            "org_invite_access_denied"
        );
    }

    #[tokio::test]
    async fn administering_takes_owner_or_admin_and_outsiders_see_no_org() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let to_member = service
            .invite_to_org(invite(&org, "owner", "m@example.com", "member"))
            .await
            .unwrap();
        service
            .accept_invite(AcceptInvite {
                user_id: "member".into(),
                invite_id: to_member.invite.invite_id,
            })
            .await
            .unwrap();
        let rows = [
            (org.org_id.as_str(), "owner", Ok(())),
            (org.org_id.as_str(), "member", Err("org_invite_access_denied")),
            (org.org_id.as_str(), "stranger", Err("org_not_found")),
            ("nope", "owner", Err("org_not_found")),
        ];
        for (org_id, caller, expected) in rows {
            let result = service.ensure_administers(org_id, caller).await;
            assert_eq!(result.map_err(|e| e.code()), expected, "{org_id} {caller}");
        }
    }

    #[tokio::test]
    async fn revoking_follows_the_table() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let pending = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        let revoke = |caller: &str, id: &str| RevokeInvite {
            caller_user_id: caller.into(),
            invite_id: id.into(),
        };
        let id = pending.invite.invite_id.as_str();

        let first = service.revoke_invite(revoke("owner", id)).await.unwrap();
        assert_eq!((first.status, first.already_revoked), (InviteStatus::Revoked, false));
        let again = service.revoke_invite(revoke("owner", id)).await.unwrap();
        assert_eq!((again.status, again.already_revoked), (InviteStatus::Revoked, true));
        let accept = AcceptInvite {
            user_id: "ada".into(),
            invite_id: id.into(),
        };
        assert_eq!(
            service.accept_invite(accept).await.unwrap_err().code(),
            "org_invite_revoked"
        );

        let accepted = service
            .invite_to_org(invite(&org, "owner", "bob@example.com", "member"))
            .await
            .unwrap();
        let accepted_id = accepted.invite.invite_id.as_str();
        service
            .accept_invite(AcceptInvite {
                user_id: "bob".into(),
                invite_id: accepted_id.into(),
            })
            .await
            .unwrap();
        let rows = [
            (revoke("owner", accepted_id), "org_invite_already_accepted"),
            (revoke("bob", accepted_id), "org_invite_access_denied"),
            (revoke("stranger", accepted_id), "org_invite_not_found"),
            (revoke("owner", "missing"), "org_invite_not_found"),
        ];
        for (command, code) in rows {
            assert_eq!(
                service.revoke_invite(command.clone()).await.unwrap_err().code(),
                code,
                "{command:?}"
            );
        }
    }

    #[tokio::test]
    async fn accepting_makes_a_member_with_the_invited_role() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let issued = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "admin"))
            .await
            .unwrap();
        let accept = AcceptInvite {
            user_id: "ada".into(),
            invite_id: issued.invite.invite_id.clone(),
        };
        let membership = service.accept_invite(accept.clone()).await.unwrap();
        assert_eq!(membership.role, OrgRole::Admin);
        assert_eq!(service.list_orgs("ada").await.unwrap()[0].org_id, org.org_id);
        assert_eq!(
            service.accept_invite(accept).await.unwrap_err().code(),
            "org_invite_already_accepted"
        );

        let late = service
            .invite_to_org(invite(&org, "owner", "late@example.com", "member"))
            .await
            .unwrap();
        fakes.clock.advance(INVITE_LIFETIME);
        let accept = AcceptInvite {
            user_id: "late".into(),
            invite_id: late.invite.invite_id,
        };
        assert_eq!(
            service.accept_invite(accept).await.unwrap_err().code(),
            "org_invite_expired"
        );
    }

    /// Invite links in memory: token hash to invite id.
    #[derive(Default)]
    struct Links(std::sync::Mutex<std::collections::HashMap<String, String>>);

    #[async_trait::async_trait]
    impl InviteLinkRepository for Links {
        async fn insert(
            &self,
            hash: &str,
            invite_id: &str,
            _: chrono::DateTime<chrono::Utc>,
        ) -> Result<(), RepositoryError> {
            self.0.lock().unwrap().insert(hash.into(), invite_id.into());
            Ok(())
        }
        async fn invite_of(&self, hash: &str) -> Result<Option<String>, RepositoryError> {
            Ok(self.0.lock().unwrap().get(hash).cloned())
        }
    }

    /// One account, `ada`, whose address is `ada@example.com`.
    struct OnlyAda;

    #[async_trait::async_trait]
    impl AccountRepository for OnlyAda {
        async fn insert(&self, _: &svc_domain::account::Account) -> Result<bool, RepositoryError> {
            unreachable!()
        }
        async fn find_by_email_key(&self, _: &str) -> Result<Option<svc_domain::account::Account>, RepositoryError> {
            unreachable!()
        }
        async fn find_by_id(&self, user_id: &str) -> Result<Option<svc_domain::account::Account>, RepositoryError> {
            let email = EmailAddress::parse("Ada@Example.com").unwrap();
            Ok((user_id == "ada").then(|| {
                svc_domain::account::Account::new("ada".into(), email, "hash".into(), chrono::DateTime::UNIX_EPOCH)
            }))
        }
        async fn set_password_hash(&self, _: &str, _: &str) -> Result<(), RepositoryError> {
            unreachable!()
        }
        async fn mark_email_verified(&self, _: &str, _: chrono::DateTime<chrono::Utc>) -> Result<(), RepositoryError> {
            unreachable!()
        }
        async fn mark_first_sign_in(&self, _: &str, _: chrono::DateTime<chrono::Utc>) -> Result<bool, RepositoryError> {
            unreachable!()
        }
    }

    #[tokio::test]
    async fn with_links_the_mail_carries_a_token_and_only_its_holder_or_the_invitee_accepts_by_id() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        let service = service.linking(InviteLinks {
            links: Arc::new(Links::default()),
            base_url: "https://ui.example/".into(),
            accounts: Arc::new(OnlyAda),
        });
        let to_ada = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        let to_bob = service
            .invite_to_org(invite(&org, "owner", "bob@example.com", "member"))
            .await
            .unwrap();
        let urls = fakes.mailer.sent_accept_urls();
        let token = |url: &Option<String>| {
            let url = url.clone().unwrap();
            assert!(url.starts_with("https://ui.example/account/invite?token="), "{url}");
            url.rsplit_once('=').unwrap().1.to_owned()
        };
        let (_, bob_token) = (token(&urls[0]), token(&urls[1]));
        let accept = |user: &str, invite: &InviteIssued| AcceptInvite {
            user_id: user.into(),
            invite_id: invite.invite.invite_id.clone(),
        };
        let rows = [
            ("eve", &to_ada, None, Err("org_invite_not_found")),
            ("eve", &to_ada, Some(bob_token.as_str()), Err("org_invite_not_found")),
            ("ada", &to_ada, None, Ok(())),
            ("eve", &to_bob, Some(bob_token.as_str()), Ok(())),
        ];
        for (user, issued, shown, expected) in rows {
            let result = service
                .accept_invite_as_caller(accept(user, issued), shown)
                .await
                .map(|_| ());
            assert_eq!(result.map_err(|e| e.code()), expected, "{user} {shown:?}");
        }
    }

    #[tokio::test]
    async fn a_failing_mailer_fails_the_invite_with_an_internal_error() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        fakes.mailer.fail_next();
        let error = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "internal_error");
        // The retry is a fresh invite, mailed; the one nobody was told of is revoked.
        let retried = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        assert!(!retried.reused, "a fresh invite, not the unannounced one");
        assert_eq!(fakes.mailer.sent_invite_ids(), vec![retried.invite.invite_id.clone()]);
        let listed = InviteRepository::list_of_org(fakes.store.as_ref(), &org.org_id)
            .await
            .unwrap();
        let statuses: Vec<&str> = listed.iter().map(|i| i.status.as_str()).collect();
        assert_eq!(statuses, ["pending", "revoked"], "newest first");
    }

    #[tokio::test]
    async fn a_pending_invite_whose_mail_was_never_queued_is_mailed_when_reused() {
        let fakes = OperatorFakes::new();
        let (service, org) = org_with_owner(&fakes).await;
        // The process stopped after storing the invite, before its mail: stored, never sent.
        let draft = InviteDraft {
            invite_id: "inv_unannounced".into(),
            org_id: org.org_id.clone(),
            email: EmailAddress::parse("ada@example.com").unwrap(),
            role: InviteRole::parse("member").unwrap(),
            inviter_user_id: "owner".into(),
        };
        InviteRepository::create_or_reuse(fakes.store.as_ref(), draft, chrono::Utc::now())
            .await
            .unwrap();
        assert!(fakes.mailer.sent_invite_ids().is_empty());
        for _ in 0..2 {
            let issued = service
                .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
                .await
                .unwrap();
            assert!(issued.reused);
            assert_eq!(issued.invite.invite_id, "inv_unannounced");
        }
        assert_eq!(
            fakes.mailer.sent_invite_ids(),
            ["inv_unannounced"],
            "mailed once, on the first reuse"
        );
    }
}
