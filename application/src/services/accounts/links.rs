//! Email verification and password reset: a one-time token, mailed as a link through the outbox.
//!
//! A reset request is answered once it is counted against its budgets (`RESET_PER_ACCOUNT`),
//! before the address is looked up: the lookup, and for an address with an account the token and
//! the mail (two writes), happen in the background, so neither the answer nor the time it takes
//! tells which addresses have accounts. Expired tokens are swept by the server.
//!
//! At most [`RESET_LOOKUPS_IN_FLIGHT`] of those run at once; a request past them is dropped with
//! a warning instead of queued. Its answer was already the same either way, so the person sees no
//! difference and may ask again; a queue instead would grow, in memory and in database work, for
//! as long as a flood from many addresses (each within its budget) outran the database. The
//! count is reached only when the lookups themselves stall or such a flood arrives.

use std::sync::Arc;

use svc_domain::account::token::{AccountToken, TOKEN_CHARS, TokenPurpose, token_hash};
use svc_domain::account::{self, Account, password};

use super::{AccountService, AccountServiceError};
use crate::ports::accounts::{AccountLink, AccountMailer, AccountTokenRepository};

/// Reset requests whose lookup and mail may run in the background at once.
pub(super) const RESET_LOOKUPS_IN_FLIGHT: usize = 64;

/// Where links point and how they travel.
#[derive(Clone)]
pub struct AccountLinks {
    pub tokens: Arc<dyn AccountTokenRepository>,
    pub mailer: Arc<dyn AccountMailer>,
    /// The public base URL links start with (`<base>/account/verify?token=...`).
    pub base_url: String,
}

/// The account pages (served by the HTTP adapter).
pub const VERIFY_PATH: &str = "/account/verify";
pub const RESET_PATH: &str = "/account/reset";

impl AccountService {
    /// Mails `account` a link that verifies its address (nothing without links configured).
    pub async fn send_verification(&self, account: &Account) -> Result<(), AccountServiceError> {
        self.send_link(account, TokenPurpose::VerifyEmail).await
    }

    /// Mails a password-reset link when `email` has an account; the same `Ok` either way,
    /// answered before the address is looked up (the rest is awaited by
    /// [`Self::background_work_finished`]), and when too many lookups run already (the request
    /// is dropped).
    pub async fn request_password_reset(
        &self,
        email: &str,
        client_address: Option<&str>,
    ) -> Result<(), AccountServiceError> {
        let Ok(email) = account::parse_email(email) else {
            return Ok(());
        };
        let key = account::email_key(&email);
        self.admit(&super::sign_in::RESET, client_address, &key).await?;
        let Ok(place) = self.reset_lookups.clone().try_acquire_owned() else {
            tracing::warn!(
                in_flight = RESET_LOOKUPS_IN_FLIGHT,
                "a password-reset request was dropped: as many are being looked up already"
            );
            return Ok(());
        };
        let service = self.clone();
        self.background.spawn(async move {
            let _held_until_done = place;
            if let Err(error) = service.mail_reset_link(&key).await {
                tracing::error!(error = ?error, "a password-reset link could not be queued");
            }
        });
        Ok(())
    }

    async fn mail_reset_link(&self, email_key: &str) -> Result<(), AccountServiceError> {
        if let Some(account) = self.accounts.find_by_email_key(email_key).await? {
            self.send_link(&account, TokenPurpose::ResetPassword).await?;
        }
        Ok(())
    }

    /// Deletes the tokens past their expiry (links never followed); how many went. Each row goes
    /// once whichever replica sweeps it, and a link is checked for expiry when used whatever this
    /// did, so racing sweeps and uses are safe.
    pub async fn sweep_expired_tokens(&self) -> Result<u64, AccountServiceError> {
        let Some(links) = &self.links else {
            return Ok(0);
        };
        Ok(links.tokens.delete_expired(self.clock.now()).await?)
    }

    /// Verifies the address of the token's account; the token is spent.
    pub async fn verify_email(&self, token: &str) -> Result<(), AccountServiceError> {
        let taken = self.take(token, TokenPurpose::VerifyEmail).await?;
        self.accounts
            .mark_email_verified(&taken.user_id, self.clock.now())
            .await?;
        Ok(())
    }

    /// Sets a new password with a reset token. The password rule is checked before the token is
    /// spent, so a too-short password can be corrected with the same link. Following the link
    /// proves the address too, and signs the account out everywhere (`ResetSignOut`); the
    /// account's other reset links stop working (one left in a mailbox someone else reads must
    /// not reset the password again).
    pub async fn reset_password(&self, token: &str, new_password: &str) -> Result<(), AccountServiceError> {
        password::check_new(new_password)?;
        // A place to hash in is taken first: a busy server must not spend the link.
        let turn = self.hashing.admit()?;
        let taken = self.take(token, TokenPurpose::ResetPassword).await?;
        let was_verified = self
            .accounts
            .find_by_id(&taken.user_id)
            .await?
            .is_some_and(|account| account.email_verified_at.is_some());
        let salt = super::salt(self.ids.as_ref());
        let hash = turn.hash(new_password.to_owned(), salt).await;
        self.accounts.set_password_hash(&taken.user_id, &hash).await?;
        if let Some(links) = &self.links {
            links
                .tokens
                .forget_all(&taken.user_id, TokenPurpose::ResetPassword)
                .await?;
        }
        self.accounts
            .mark_email_verified(&taken.user_id, self.clock.now())
            .await?;
        if let Some(sign_out) = &self.reset_sign_out {
            sign_out.after_reset(&taken.user_id, was_verified).await?;
        }
        Ok(())
    }

    async fn take(&self, token: &str, purpose: TokenPurpose) -> Result<AccountToken, AccountServiceError> {
        let links = self.links.as_ref().ok_or(AccountServiceError::LinkInvalid)?;
        let taken = links.tokens.take(&token_hash(token.trim()), purpose).await?;
        taken
            .filter(|t| t.is_live(self.clock.now()))
            .ok_or(AccountServiceError::LinkInvalid)
    }

    async fn send_link(&self, account: &Account, purpose: TokenPurpose) -> Result<(), AccountServiceError> {
        let Some(links) = &self.links else {
            return Ok(());
        };
        let now = self.clock.now();
        let token = self.ids.base62(TOKEN_CHARS);
        let stored = AccountToken::issue(&token, &account.user_id, purpose, now);
        links.tokens.insert(&stored).await?;
        let path = match purpose {
            TokenPurpose::VerifyEmail => VERIFY_PATH,
            TokenPurpose::ResetPassword => RESET_PATH,
        };
        let link = AccountLink {
            id: format!("{}:{}", purpose.as_str(), &stored.token_hash[..32]),
            purpose,
            recipient: account.email.as_str().to_owned(),
            url: format!("{}{path}?token={token}", links.base_url.trim_end_matches('/')),
            created_at: now,
        };
        links.mailer.queue_link(&link).await?;
        tracing::info!(kind = purpose.as_str(), user_id = %account.user_id, "account email queued in the mail outbox");
        Ok(())
    }
}
