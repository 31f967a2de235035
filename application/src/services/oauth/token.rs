//! `POST /oauth/token`: the authorization-code grant, nothing else (no refresh token, no expiry:
//! the token lives as long as its key).
//!
//! Every redemption attempt consumes the code. A replayed code revokes the key it carried (RFC
//! 6749 section 4.1.2: the code may have been stolen), and so does a failed redemption, since
//! the burnt code can no longer deliver the key to anyone. A redeemed code revokes the keys the
//! same client was given before for the same owner (`client_keys`): one key per connected client.

use chrono::{DateTime, Utc};
use svc_domain::oauth::{CodeError, CodeExchange, hash_code};

use super::{ClientDocumentRefused, FindClientError, OAuthService};
use crate::ports::RepositoryError;
use crate::ports::oauth::CodeConsumption;

/// The token request's fields as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_id: Option<String>,
    pub code_verifier: Option<String>,
    pub resource: Option<String>,
}

/// The bearer key the client sends to `/mcp` from now on.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken(***)")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("grant_type must be authorization_code")]
    UnsupportedGrantType,
    #[error("{0} is required")]
    MissingParameter(&'static str),
    #[error("the client_id is not registered")]
    UnknownClient,
    /// A URL `client_id` whose metadata document was refused.
    #[error(transparent)]
    ClientDocument(#[from] ClientDocumentRefused),
    #[error("the authorization code is not valid")]
    UnknownCode,
    #[error(transparent)]
    Grant(#[from] CodeError),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl TokenError {
    /// The RFC 6749 section 5.2 error code (`invalid_target` from RFC 8707).
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::MissingParameter(_) => "invalid_request",
            Self::UnknownClient | Self::ClientDocument(_) => "invalid_client",
            Self::UnknownCode => "invalid_grant",
            Self::Grant(e) => e.code(),
            Self::Storage(_) => "server_error",
        }
    }
}

fn required<'a>(value: &'a Option<String>, name: &'static str) -> Result<&'a str, TokenError> {
    value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or(TokenError::MissingParameter(name))
}

impl OAuthService {
    pub async fn exchange(&self, request: &TokenRequest) -> Result<AccessToken, TokenError> {
        if required(&request.grant_type, "grant_type")? != "authorization_code" {
            return Err(TokenError::UnsupportedGrantType);
        }
        let exchange = CodeExchange {
            code: required(&request.code, "code")?,
            redirect_uri: required(&request.redirect_uri, "redirect_uri")?,
            client_id: required(&request.client_id, "client_id")?,
            code_verifier: required(&request.code_verifier, "code_verifier")?,
            resource: request.resource.as_deref().filter(|r| !r.is_empty()),
        };
        if self.find_client(exchange.client_id).await?.is_none() {
            return Err(TokenError::UnknownClient);
        }
        let now = self.ports.clock.now();
        let code = match self.ports.codes.consume(&hash_code(exchange.code), now).await? {
            CodeConsumption::Unknown => return Err(TokenError::UnknownCode),
            CodeConsumption::Replayed(code) => {
                self.revoke_quietly(&code.key).await;
                // A code the sweep settled once it expired unredeemed reads as what it is.
                let error = if now >= code.expires_at {
                    CodeError::Expired
                } else {
                    CodeError::Replayed
                };
                return Err(error.into());
            }
            CodeConsumption::Consumed(code) => code,
        };
        match code.exchange(&exchange, &self.issuer, now) {
            Ok(token) => {
                self.record_last_resource(exchange.client_id, code.binding.resource.as_deref(), now)
                    .await;
                self.supersede_earlier_keys(exchange.client_id, code.binding.resource.as_deref(), &code.key)
                    .await;
                Ok(AccessToken(token))
            }
            Err(error) => {
                self.revoke_quietly(&code.key).await;
                Err(error.into())
            }
        }
    }
}

impl OAuthService {
    /// Labels the client with the resource it connected for (`lastResource`), and marks it used
    /// `now` (the sweep keeps it). Best effort: the label is for operators, while the code is
    /// spent and its key would reach nobody if the token were not answered now; the key's
    /// delivery keeps the client anyway while the key is active.
    async fn record_last_resource(&self, client_id: &str, resource: Option<&str>, now: DateTime<Utc>) {
        if let Err(error) = self.ports.clients.record_last_resource(client_id, resource, now).await {
            tracing::warn!(client_id, error = %error, "could not record an OAuth client's last resource");
        }
    }
}

impl From<FindClientError> for TokenError {
    fn from(e: FindClientError) -> Self {
        match e {
            FindClientError::Refused(refused) => Self::ClientDocument(refused),
            FindClientError::Storage(storage) => Self::Storage(storage),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::oauth::test_flow::{REDIRECT, VERIFIER, approved_code};
    use crate::testing::OAuthFakes;

    /// `lastResource` labels a connection for operators; failing to write it must not keep the
    /// token from the client, whose code is spent by then (its key would stay live, unreachable).
    #[tokio::test]
    async fn a_failed_last_resource_write_still_answers_the_token_and_keeps_its_key() {
        let fakes = OAuthFakes::default();
        let service = fakes.service();
        let (client_id, code) = approved_code(&fakes, &service, None).await;
        fakes.store.fail_recording_last_resource();

        let token = service
            .exchange(&TokenRequest {
                grant_type: Some("authorization_code".into()),
                code: Some(code),
                redirect_uri: Some(REDIRECT.into()),
                client_id: Some(client_id),
                code_verifier: Some(VERIFIER.into()),
                resource: None,
            })
            .await
            .expect("the token is answered");

        let key = fakes
            .operator
            .connector_key_service()
            .authenticate(token.expose())
            .await
            .unwrap()
            .expect("the delivered key still authenticates");
        assert_eq!(key.owner_user_id, "ada");
    }
}
