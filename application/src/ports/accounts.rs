//! Ports of hosted accounts: the accounts themselves and their one-time tokens.

use chrono::{DateTime, Utc};
use svc_domain::account::Account;
use svc_domain::account::token::{AccountToken, TokenPurpose};

use super::RepositoryError;

#[async_trait::async_trait]
pub trait AccountRepository: Send + Sync {
    /// Stores a new account; `false` (nothing stored) when its email is taken.
    async fn insert(&self, account: &Account) -> Result<bool, RepositoryError>;
    /// The account whose `email_key` is `key` (the lowercased address).
    async fn find_by_email_key(&self, key: &str) -> Result<Option<Account>, RepositoryError>;
    async fn find_by_id(&self, user_id: &str) -> Result<Option<Account>, RepositoryError>;
    async fn set_password_hash(&self, user_id: &str, password_hash: &str) -> Result<(), RepositoryError>;
    /// Stamps the address verified (the first stamp stays).
    async fn mark_email_verified(&self, user_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError>;
    /// Stamps the first sign-in; `true` only for the call that set it (a compare-and-set, so of
    /// racing replicas one wins).
    async fn mark_first_sign_in(&self, user_id: &str, at: DateTime<Utc>) -> Result<bool, RepositoryError>;
}

#[async_trait::async_trait]
pub trait AccountTokenRepository: Send + Sync {
    async fn insert(&self, token: &AccountToken) -> Result<(), RepositoryError>;
    /// Consumes the token with this hash and purpose: the stored token the first time (deleted
    /// in the same step, so a link works once even across replicas), `None` after.
    async fn take(&self, token_hash: &str, purpose: TokenPurpose) -> Result<Option<AccountToken>, RepositoryError>;
    /// Deletes every token of `user_id` for `purpose` (the links still in mailboxes stop working).
    async fn forget_all(&self, user_id: &str, purpose: TokenPurpose) -> Result<(), RepositoryError>;
    /// Deletes every token whose expiry is at or before `now`; how many it deleted.
    async fn delete_expired(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError>;
}

/// An email carrying a one-time link (verification or password reset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountLink {
    /// The outbox id: one mail per token.
    pub id: String,
    pub purpose: TokenPurpose,
    pub recipient: String,
    pub url: String,
    pub created_at: DateTime<Utc>,
}

/// Queues account mail durably (the mail outbox).
#[async_trait::async_trait]
pub trait AccountMailer: Send + Sync {
    async fn queue_link(&self, link: &AccountLink) -> Result<(), RepositoryError>;
}
