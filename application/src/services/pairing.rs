//! Pairing: the 6-digit code printed at boot is exchanged for a bearer key (a connector key of the
//! local operator), so a client can connect without a key minted beforehand.

use subtle::ConstantTimeEq;

use super::operator::{ConnectorKeyService, IssueConnectorKey};
use crate::ports::RepositoryError;
use crate::ports::auth::{KeyOwner, KeyStore};

/// Digits of a pair code.
pub const PAIR_CODE_DIGITS: usize = 6;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("wrong pair code")]
    WrongCode,
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
        let issued = self
            .keys
            .issue(IssueConnectorKey {
                caller_user_id: self.operator.clone(),
                name: Some(
                    client_name
                        .filter(|n| !n.trim().is_empty())
                        .unwrap_or_else(|| "paired client".into()),
                ),
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

    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError> {
        self.key_is_live(key_id)
            .await
            .map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("{e}")))
    }
}
