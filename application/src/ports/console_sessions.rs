//! Console sessions, stored so every replica behind one database honours them.

use chrono::{DateTime, Utc};

use super::RepositoryError;

/// One stored console session. The cookie's secret is never stored: only its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredConsoleSession {
    /// sha256 hex of the cookie value.
    pub token_hash: String,
    pub principal_id: String,
    /// The app the signing-in key was locked to; `None` for a universal key or an account.
    pub locked_app: Option<String>,
    /// The key the session was opened with: the session ends when that key is revoked or expires.
    /// `None` for an identity with no key (a hosted account sign-in, the development mode).
    pub key_id: Option<String>,
    /// The CSRF token every state-changing request of the session must send back in a header.
    pub csrf_token: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

#[async_trait::async_trait]
pub trait ConsoleSessionStore: Send + Sync {
    async fn insert(&self, session: &StoredConsoleSession) -> Result<(), RepositoryError>;
    /// [`Self::insert`] that keeps at most `max_live` sessions of the principal unexpired at the
    /// session's `created_at`: its oldest (by `created_at`) are deleted, as signing out does, in
    /// the insert's transaction; answers how many. Inserts of one principal count under one
    /// lock, so racing ones never leave more.
    async fn insert_keeping_newest(
        &self,
        session: &StoredConsoleSession,
        max_live: u64,
    ) -> Result<u64, RepositoryError>;
    async fn find(&self, token_hash: &str) -> Result<Option<StoredConsoleSession>, RepositoryError>;
    async fn delete(&self, token_hash: &str) -> Result<(), RepositoryError>;
    /// Forgets every session past its expiry at `now` (housekeeping on sign-in).
    async fn delete_expired(&self, now: DateTime<Utc>) -> Result<(), RepositoryError>;
    /// Ends every session of `principal_id` (a password reset signs the account out everywhere).
    async fn delete_of_principal(&self, principal_id: &str) -> Result<(), RepositoryError>;
}
