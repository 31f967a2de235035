//! Ports of sign-in with an external OpenID Connect provider (hosted mode): the provider itself
//! (svc is its client), the sign-ins under way between the redirect to the provider and its
//! return, and the identities linked to accounts.

use chrono::{DateTime, Utc};

use super::RepositoryError;

/// The person as the provider vouches for them, from a verified ID token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIdentity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    /// The provider says it verified `email` (`email_verified: true`).
    pub email_verified: bool,
}

/// What the redirect to the provider needs remembered until the person comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRedirect {
    /// The provider's authorization URL (carries `state`, `nonce` and the PKCE S256 challenge).
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// Why the provider's answer was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExternalSignInError {
    /// The provider could not be reached or its discovery document is unusable.
    #[error("the identity provider is unavailable: {0}")]
    Unavailable(String),
    /// The code exchange was refused (a used or expired code, a wrong PKCE verifier, ...).
    #[error("the identity provider refused the sign-in: {0}")]
    ExchangeRefused(String),
    /// The ID token failed a check (issuer, audience, signature, expiry, nonce).
    #[error("the identity provider's ID token was not accepted: {0}")]
    TokenRejected(String),
}

/// An OpenID Connect provider, with svc registered as its client.
#[async_trait::async_trait]
pub trait IdentityProvider: Send + Sync {
    /// Shown on the consent page: "Sign in with <display name>".
    fn display_name(&self) -> &str;
    /// The issuer identities from this provider are keyed by.
    fn issuer(&self) -> &str;
    /// A fresh authorization request (authorization code flow, PKCE S256, state, nonce).
    async fn redirect(&self) -> Result<ProviderRedirect, ExternalSignInError>;
    /// Exchanges `code` and verifies the ID token (issuer, audience, signature, expiry, `nonce`).
    async fn identity(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<ExternalIdentity, ExternalSignInError>;
}

/// A sign-in under way: the OAuth authorization request it continues and the secrets of the
/// provider redirect. Kept in the database so any replica can take the provider's return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingExternalSignIn {
    /// sha256 of the `state` sent to the provider.
    pub state_hash: String,
    /// sha256 of the browser cookie set with the redirect: the return must come from the same
    /// browser (no login injection).
    pub browser_hash: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// The MCP client's authorization request, as form pairs (JSON object of strings).
    pub request_json: String,
    /// The person's client address as the sign-in budgets key it (logged with the sign-in).
    pub client_address: Option<String>,
    pub expires_at: DateTime<Utc>,
}

#[async_trait::async_trait]
pub trait PendingExternalSignIns: Send + Sync {
    async fn insert(&self, pending: &PendingExternalSignIn) -> Result<(), RepositoryError>;
    /// Takes the sign-in with this state hash: the row the first time (deleted in the same step,
    /// so a state works once across replicas), `None` after.
    async fn take(&self, state_hash: &str) -> Result<Option<PendingExternalSignIn>, RepositoryError>;
}

/// (issuer, subject) -> account.
#[async_trait::async_trait]
pub trait ExternalIdentityRepository: Send + Sync {
    async fn find_user(&self, issuer: &str, subject: &str) -> Result<Option<String>, RepositoryError>;
    /// Links the identity to `user_id`; `false` when the identity is already linked.
    async fn link(
        &self,
        issuer: &str,
        subject: &str,
        user_id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, RepositoryError>;
}
