//! Signing in with an identity an external OpenID Connect provider vouched for.
//!
//! The account is found by (issuer, subject). An identity seen for the first time is linked to
//! the account whose email it carries only when both sides verified that address: the provider
//! (`email_verified`) and the account (`email_verified_at`, set by its verification or reset
//! link). Either check alone would let someone who merely typed an address own whoever later
//! proves it: under open sign-up anyone may register a stranger's address with a password. When
//! no account has the address and sign-up is open, an account is created, but only for an
//! address the provider verified (an unverified one would hold that address, and the identity
//! linked to it, for whoever claimed it). A provider-made account has no password anyone knows
//! (a random one is hashed); a password reset gives it one.

use svc_domain::account::{self, Account};

use super::{AccountService, AccountServiceError, GENERATED_PASSWORD_CHARS, SignedIn};
use crate::ports::external_identity::ExternalIdentity;

impl AccountService {
    pub async fn sign_in_external(&self, identity: &ExternalIdentity) -> Result<SignedIn, AccountServiceError> {
        let identities = self
            .identities
            .as_ref()
            .ok_or(AccountServiceError::ExternalIdentityUnknown)?;
        let (account, created) = match identities.find_user(&identity.issuer, &identity.subject).await? {
            Some(user_id) => {
                let account = self.accounts.find_by_id(&user_id).await?;
                (account.ok_or(AccountServiceError::ExternalIdentityUnknown)?, false)
            }
            None => self.first_external_sign_in(identity).await?,
        };
        let first_sign_in = self
            .accounts
            .mark_first_sign_in(&account.user_id, self.clock.now())
            .await?;
        Ok(SignedIn {
            account,
            first_sign_in,
            created,
        })
    }

    /// An identity not linked yet: linked to the account of an address both sides verified, or a
    /// new account for an address the provider verified when sign-up is open.
    async fn first_external_sign_in(
        &self,
        identity: &ExternalIdentity,
    ) -> Result<(Account, bool), AccountServiceError> {
        let email = identity
            .email
            .as_deref()
            .and_then(|raw| account::parse_email(raw).ok())
            .ok_or(if self.signup.allows_self_signup() {
                AccountServiceError::ExternalEmailMissing
            } else {
                AccountServiceError::ExternalIdentityUnknown
            })?;
        let existing = self.accounts.find_by_email_key(&account::email_key(&email)).await?;
        let (account, created) = match existing {
            Some(account) if identity.email_verified && account.email_verified_at.is_some() => (account, false),
            // An address unproven on either side says nothing about who owns that account.
            Some(_) => return Err(AccountServiceError::ExternalEmailTaken),
            None if !self.signup.allows_self_signup() => return Err(AccountServiceError::ExternalIdentityUnknown),
            None if !identity.email_verified => return Err(AccountServiceError::ExternalEmailMissing),
            None => {
                let unusable = self.ids.base62(GENERATED_PASSWORD_CHARS);
                let account = self
                    .insert(email, &unusable)
                    .await?
                    .ok_or(AccountServiceError::ExternalEmailTaken)?;
                self.accounts
                    .mark_email_verified(&account.user_id, self.clock.now())
                    .await?;
                (account, true)
            }
        };
        let identities = self.identities.as_ref().expect("checked by the caller");
        let now = self.clock.now();
        if !identities
            .link(&identity.issuer, &identity.subject, &account.user_id, now)
            .await?
        {
            // A racing first sign-in linked it meanwhile: that link is the truth.
            let user_id = identities
                .find_user(&identity.issuer, &identity.subject)
                .await?
                .ok_or(AccountServiceError::ExternalIdentityUnknown)?;
            let linked = self.accounts.find_by_id(&user_id).await?;
            return Ok((linked.ok_or(AccountServiceError::ExternalIdentityUnknown)?, false));
        }
        tracing::info!(user_id = %account.user_id, issuer = %identity.issuer, created, "external identity linked to an account");
        Ok((account, created))
    }
}
