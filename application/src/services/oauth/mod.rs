//! The OAuth 2.1 authorization server for MCP hosts (Document 2): registration, authorize (with
//! the consent step), token. The access token is a connector key minted at consent, so there is
//! no token store of its own: the key check that guards `/mcp` accepts it, the key list shows it,
//! and revoking it ends the connection.

mod authorize;
mod client_documents;
mod client_keys;
mod consent;
mod document_fetch_slots;
mod external;
mod key_label;
mod register;
mod resources;
mod sweep;
#[cfg(test)]
mod test_flow;
mod token;

use std::sync::Arc;

use chrono::TimeDelta;
use svc_domain::oauth::{Issuer, OAuthClient, is_client_id_url};

pub use authorize::{
    AuthorizationErrorCode, AuthorizationRequest, AuthorizeError, ErrorRedirect, PARAMETER_MAX_BYTES,
    RejectedAuthorization, ValidatedAuthorization,
};
pub use client_documents::{CLIENT_DOCUMENT_CACHE_SECONDS, ClientDocumentRefused, ClientDocuments};
pub use consent::{ApproveError, ConsentCredential};
pub use document_fetch_slots::{CLIENT_DOCUMENT_FETCHES_AT_ONCE, CLIENT_DOCUMENT_FETCHES_PER_HOST};
pub use external::{EXTERNAL_SIGN_IN_LIFETIME, ExternalSignIn, ExternalSignInStarted};
pub use register::{RegisterClient, RegisterError};
pub use resources::KnownAppsResourceValidator;
pub use sweep::{CodeSweep, SETTLED_CODES_KEPT, UNUSED_CLIENTS_KEPT};
pub use token::{AccessToken, TokenError, TokenRequest};

use super::accounts::AccountService;
use super::auth::AuthService;
use super::operator::{ConnectorKeyService, CreditService};
use super::pairing::PairingService;
use crate::ports::agent::AppRepository;
use crate::ports::oauth::{
    AuthorizationCodeRepository, OAuthClientKeyRepository, OAuthClientRepository, ResourceValidator,
};
use crate::ports::{Clock, Ids};

/// Every port the OAuth surface uses.
#[derive(Clone)]
pub struct OAuthPorts {
    pub clients: Arc<dyn OAuthClientRepository>,
    pub codes: Arc<dyn AuthorizationCodeRepository>,
    /// The keys redeemed codes delivered, so a client that connects again replaces its key.
    pub client_keys: Arc<dyn OAuthClientKeyRepository>,
    pub resources: Arc<dyn ResourceValidator>,
    pub apps: Arc<dyn AppRepository>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
    /// Clients whose `client_id` is the URL of their metadata document.
    pub client_documents: ClientDocuments,
}

/// The checks a consent is approved with, shared with the rest of the server: the key check that
/// guards `/mcp`, the pairing service (strict mode only) and the connector keys that become
/// access tokens.
#[derive(Clone)]
pub struct ConsentChecks {
    pub auth: AuthService,
    pub pairing: Option<PairingService>,
    pub keys: ConnectorKeyService,
    /// Hosted accounts: the consent page signs the person in (email and password).
    pub accounts: Option<AccountSignIn>,
    /// Hosted accounts: sign-in with an external OpenID Connect provider.
    pub external: Option<ExternalSignIn>,
}

/// Signing in at consent: the accounts, and the wallets that get a first sign-in's free credit.
#[derive(Clone)]
pub struct AccountSignIn {
    pub accounts: AccountService,
    pub credits: Option<Arc<CreditService>>,
}

#[derive(Clone)]
pub struct OAuthService {
    issuer: Issuer,
    ports: OAuthPorts,
    checks: ConsentChecks,
    code_lifetime: TimeDelta,
}

impl OAuthService {
    /// `code_lifetime` is Document 2's 5 minutes in production; tests shorten it.
    pub fn new(issuer: Issuer, ports: OAuthPorts, checks: ConsentChecks, code_lifetime: TimeDelta) -> Self {
        Self {
            issuer,
            ports,
            checks,
            code_lifetime,
        }
    }

    pub fn issuer(&self) -> &Issuer {
        &self.issuer
    }

    /// The sign-up mode when the consent page signs people in with an account (hosted mode).
    pub fn signup_mode(&self) -> Option<svc_domain::account::SignupMode> {
        self.checks.accounts.as_ref().map(|a| a.accounts.signup_mode())
    }

    /// The clock the service reads, shared with the transport's rate limits.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.ports.clock.clone()
    }

    /// The client `client_id` names: a registered one, or (a URL) the one its metadata document
    /// describes. `Ok(None)`: no such registered client.
    async fn find_client(&self, client_id: &str) -> Result<Option<OAuthClient>, FindClientError> {
        if is_client_id_url(client_id) {
            let client = self
                .ports
                .client_documents
                .client(client_id, self.ports.clock.as_ref())
                .await?;
            return Ok(Some(client));
        }
        Ok(self.ports.clients.get(client_id).await?)
    }

    /// Whether the deployment knows `resource` (for the app-scoped protected-resource metadata).
    pub async fn knows_resource(
        &self,
        resource: &svc_domain::oauth::ResourceIndicator,
    ) -> Result<bool, crate::ports::RepositoryError> {
        self.ports.resources.accepts(&self.issuer, resource).await
    }
}

/// Why [`OAuthService::find_client`] found no client.
#[derive(Debug, thiserror::Error)]
enum FindClientError {
    #[error(transparent)]
    Refused(#[from] ClientDocumentRefused),
    #[error(transparent)]
    Storage(#[from] crate::ports::RepositoryError),
}
