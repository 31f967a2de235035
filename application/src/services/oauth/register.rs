//! `POST /oauth/register` (RFC 7591): open registration under Document 2's rules.

use svc_domain::oauth::{ClientRegistration, OAuthClient, RegistrationError};

use super::OAuthService;
use crate::ports::RepositoryError;

/// The registration fields the rules look at; other client metadata is ignored (RFC 7591 lets
/// the server replace it: the answer states the grant, response types and auth method it uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterClient {
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error(transparent)]
    Rejected(#[from] RegistrationError),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl OAuthService {
    pub async fn register(&self, command: RegisterClient) -> Result<OAuthClient, RegisterError> {
        let registration = ClientRegistration::parse(&command.redirect_uris, command.client_name.as_deref())?;
        let client = OAuthClient::register(self.ports.ids.uuid(), registration, self.ports.clock.now());
        self.ports.clients.insert(&client).await?;
        Ok(client)
    }
}
