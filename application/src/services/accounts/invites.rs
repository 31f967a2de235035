//! Accepting an org invite through its mailed one-time link (`hosted.signup = invite`): the
//! person creates an account for the invited address, or signs in to an account they have, and
//! becomes a member with the invite's role.
//!
//! The link's token is the credential: only its sha256 is stored (`org_invite_links`). A used
//! link is not deleted; the invite's status says it was accepted, so a second use is told so,
//! until the retention sweep deletes the link with its invite (`retention.expired_session_days`
//! after the invite ended); then it is an unknown link.

use std::sync::Arc;

use svc_domain::account::password;
use svc_domain::account::token::token_hash;
use svc_domain::invite::{Invite, InviteError, InviteStatus};
use svc_domain::org::OrgMembership;

use super::sign_in::SignIn;
use super::{AccountService, AccountServiceError};
use crate::ports::RepositoryError;
use crate::ports::operator::{InviteLinkRepository, InviteRepository, TransitionError};

#[derive(Debug, thiserror::Error)]
pub enum InviteAcceptError {
    /// No link has this token.
    #[error("this invite link is not known")]
    UnknownLink,
    /// The invite was revoked, has expired, or was already accepted.
    #[error(transparent)]
    Invite(InviteError),
    /// Creating the account or signing in was refused (sign-up closed, password rule, email
    /// taken, wrong password, rate limited).
    #[error(transparent)]
    Account(#[from] AccountServiceError),
}

impl From<RepositoryError> for InviteAcceptError {
    fn from(e: RepositoryError) -> Self {
        Self::Account(AccountServiceError::Storage(e))
    }
}

impl From<TransitionError<InviteError>> for InviteAcceptError {
    fn from(e: TransitionError<InviteError>) -> Self {
        match e {
            TransitionError::Rejected(e) => Self::Invite(e),
            TransitionError::Repository(e) => e.into(),
        }
    }
}

/// A live invite behind a link, for the page that offers to accept it.
#[derive(Debug, Clone)]
pub struct OpenedInvite {
    pub invite: Invite,
    /// The invited address has an account (the page leads with signing in).
    pub account_exists: bool,
    /// The page may offer to create an account (`hosted.signup` is `invite` or `open`).
    pub may_create: bool,
}

/// An accepted invite: the membership and the account it was bound to.
#[derive(Debug, Clone)]
pub struct InviteAccepted {
    pub membership: OrgMembership,
    pub user_id: String,
    pub email: String,
    /// The account was created by this acceptance.
    pub created: bool,
}

#[derive(Clone)]
pub struct InviteSignup {
    accounts: AccountService,
    invites: Arc<dyn InviteRepository>,
    links: Arc<dyn InviteLinkRepository>,
}

impl InviteSignup {
    pub fn new(
        accounts: AccountService,
        invites: Arc<dyn InviteRepository>,
        links: Arc<dyn InviteLinkRepository>,
    ) -> Self {
        Self {
            accounts,
            invites,
            links,
        }
    }

    /// The live invite behind `token`: unknown link, revoked, expired or accepted are refused.
    pub async fn open(&self, token: &str) -> Result<OpenedInvite, InviteAcceptError> {
        let invite = self.live_invite(token).await?;
        let key = svc_domain::account::email_key(&invite.email);
        let account_exists = self.accounts.accounts.find_by_email_key(&key).await?.is_some();
        Ok(OpenedInvite {
            invite,
            account_exists,
            may_create: self.accounts.signup.allows_invite_signup(),
        })
    }

    /// Creates an account for the invited address with `password` and accepts the invite with
    /// it. Following the link proves the address, so the account starts verified.
    pub async fn create(&self, token: &str, password: &str) -> Result<InviteAccepted, InviteAcceptError> {
        let invite = self.live_invite(token).await?;
        if !self.accounts.signup.allows_invite_signup() {
            return Err(AccountServiceError::SignupClosed.into());
        }
        password::check_new(password).map_err(AccountServiceError::from)?;
        // Refused before hashing: a holder of a link to an address that has an account could
        // otherwise keep the hashing gate busy (19 MiB of argon2 per try) answering 409s.
        let key = svc_domain::account::email_key(&invite.email);
        if self.accounts.accounts.find_by_email_key(&key).await?.is_some() {
            return Err(AccountServiceError::EmailTaken.into());
        }
        let account = self
            .accounts
            .insert(invite.email.clone(), password)
            .await?
            .ok_or(AccountServiceError::EmailTaken)?;
        let now = self.accounts.clock.now();
        self.accounts
            .accounts
            .mark_email_verified(&account.user_id, now)
            .await?;
        let (_, membership) = self.invites.accept(&invite.invite_id, &account.user_id, now).await?;
        Ok(InviteAccepted {
            membership,
            user_id: account.user_id,
            email: account.email.as_str().to_owned(),
            created: true,
        })
    }

    /// Signs in to an existing account (`email`, else the invited address) and accepts the
    /// invite with it. Counted against the sign-in budgets like any sign-in.
    pub async fn sign_in(
        &self,
        token: &str,
        email: Option<&str>,
        password: &str,
        client_address: Option<&str>,
    ) -> Result<InviteAccepted, InviteAcceptError> {
        let invite = self.live_invite(token).await?;
        let email = email.filter(|e| !e.trim().is_empty()).unwrap_or(invite.email.as_str());
        let signed_in = self
            .accounts
            .sign_in(SignIn {
                email: email.to_owned(),
                password: password.to_owned(),
                client_address: client_address.map(str::to_owned),
                sign_up: false,
            })
            .await?;
        let now = self.accounts.clock.now();
        let account = signed_in.account;
        let (_, membership) = self.invites.accept(&invite.invite_id, &account.user_id, now).await?;
        Ok(InviteAccepted {
            membership,
            user_id: account.user_id,
            email: account.email.as_str().to_owned(),
            created: false,
        })
    }

    async fn live_invite(&self, token: &str) -> Result<Invite, InviteAcceptError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(InviteAcceptError::UnknownLink);
        }
        let invite_id = self
            .links
            .invite_of(&token_hash(token))
            .await?
            .ok_or(InviteAcceptError::UnknownLink)?;
        let invite = self
            .invites
            .get(&invite_id)
            .await?
            .ok_or(InviteAcceptError::UnknownLink)?;
        match invite.status_at(self.accounts.clock.now()) {
            InviteStatus::Pending => Ok(invite),
            InviteStatus::Accepted => Err(InviteAcceptError::Invite(InviteError::AlreadyAccepted)),
            InviteStatus::Revoked => Err(InviteAcceptError::Invite(InviteError::Revoked)),
            InviteStatus::Expired => Err(InviteAcceptError::Invite(InviteError::Expired)),
        }
    }
}
