//! Pairing: the 6-digit code printed at boot is exchanged for a bearer key (a connector key of the
//! local operator), so a client can connect without a key minted beforehand.

use subtle::ConstantTimeEq;
use svc_domain::connector_key::{ConnectorKeyError, KeyName};
use svc_domain::name::NameError;

use super::operator::{ConnectorKeyService, IssueConnectorKey};
use crate::ports::RepositoryError;
use crate::ports::auth::{KeyOwner, KeyStore};

/// Digits of a pair code.
pub const PAIR_CODE_DIGITS: usize = 6;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("wrong pair code")]
    WrongCode,
    /// `clientName` breaks the key-name rule.
    #[error("clientName: {0}")]
    InvalidClientName(NameError),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

#[derive(Clone)]
pub struct PairingService {
    code: String,
    /// The principal paired bearers act for.
    operator: String,
    keys: ConnectorKeyService,
}

impl PairingService {
    pub fn new(code: String, operator: String, keys: ConnectorKeyService) -> Self {
        Self { code, operator, keys }
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// Exchanges the pair code for a fresh bearer, returned once.
    pub async fn exchange(&self, code: &str, client_name: Option<String>) -> Result<(String, String), PairingError> {
        if !bool::from(code.trim().as_bytes().ct_eq(self.code.as_bytes())) {
            return Err(PairingError::WrongCode);
        }
        let name = match client_name.filter(|n| !n.trim().is_empty()) {
            None => "paired client".to_owned(),
            Some(raw) => match KeyName::parse(&raw) {
                Ok(name) => name.as_str().to_owned(),
                Err(ConnectorKeyError::InvalidName(rule)) => return Err(PairingError::InvalidClientName(rule)),
                Err(other) => return Err(PairingError::Internal(other.into())),
            },
        };
        let issued = self
            .keys
            .issue(IssueConnectorKey {
                caller_user_id: self.operator.clone(),
                name: Some(name),
                app_id: None,
                expires_at: None,
            })
            .await
            .map_err(|e| PairingError::Internal(anyhow::anyhow!("{e}")))?;
        Ok((issued.summary.id.clone(), issued.plaintext_key.expose().to_owned()))
    }
}

/// Connector keys (paired, OAuth-minted, or issued on `/ops`) authenticate tool routes.
#[async_trait::async_trait]
impl KeyStore for ConnectorKeyService {
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError> {
        let key = self
            .authenticate(bearer)
            .await
            .map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("{e}")))?;
        Ok(key.map(|k| KeyOwner {
            key_id: k.id,
            principal_id: k.owner_user_id,
            app_id: k.app_id,
        }))
    }
}
