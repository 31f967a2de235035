//! The consent step through an external OpenID Connect provider (hosted mode): the consent form
//! sends the person to the provider; its return (`GET /oauth/oidc/callback`) signs them in and
//! the MCP client's authorization goes on as for a password sign-in.
//!
//! The sign-in under way is a database row keyed by the sha256 of the `state` sent to the
//! provider, taken once; it holds the nonce and the PKCE verifier, the client's authorization
//! request, and the sha256 of a cookie set in the browser that started it, so a return with a
//! replayed `state`, or in another browser, is refused.

use std::sync::Arc;

use chrono::TimeDelta;
use serde_json::{Map, Value};
use svc_domain::account::token::token_hash;

use super::OAuthService;
use super::authorize::AuthorizationRequest;
use super::consent::ApproveError;
use crate::ports::external_identity::{IdentityProvider, PendingExternalSignIn, PendingExternalSignIns};
use crate::services::accounts::AccountServiceError;

/// How long the person has at the provider.
pub const EXTERNAL_SIGN_IN_LIFETIME: TimeDelta = TimeDelta::minutes(10);
/// Random base62 characters of the browser-binding cookie.
const BROWSER_SECRET_CHARS: usize = 43;

/// The provider and where sign-ins under way are kept.
#[derive(Clone)]
pub struct ExternalSignIn {
    pub provider: Arc<dyn IdentityProvider>,
    pub pending: Arc<dyn PendingExternalSignIns>,
}

/// The redirect to the provider and the cookie that binds the return to this browser.
#[derive(Debug, Clone)]
pub struct ExternalSignInStarted {
    pub provider_url: String,
    pub browser_secret: String,
}

impl OAuthService {
    /// The provider's display name when sign-in with it is configured.
    pub fn external_provider_name(&self) -> Option<&str> {
        self.checks.external.as_ref().map(|e| e.provider.display_name())
    }

    /// Starts a sign-in at the provider for the (checked) authorization `request`.
    pub async fn begin_external(
        &self,
        request: &AuthorizationRequest,
        client_address: Option<String>,
    ) -> Result<ExternalSignInStarted, ApproveError> {
        self.validate_authorization(request).await?;
        let external = self.checks.external.as_ref().ok_or(ApproveError::ExternalUnavailable)?;
        let redirect = external.provider.redirect().await?;
        let browser_secret = self.ports.ids.base62(BROWSER_SECRET_CHARS);
        let pending = PendingExternalSignIn {
            state_hash: token_hash(&redirect.state),
            browser_hash: token_hash(&browser_secret),
            nonce: redirect.nonce,
            pkce_verifier: redirect.pkce_verifier,
            request_json: request_to_json(request),
            client_address,
            expires_at: self.ports.clock.now() + EXTERNAL_SIGN_IN_LIFETIME,
        };
        external.pending.insert(&pending).await?;
        Ok(ExternalSignInStarted {
            provider_url: redirect.url,
            browser_secret,
        })
    }

    /// The provider's return with `code`: the identity is verified, the person signed in (or
    /// their account made, by the sign-up rules), and the client's code issued. Answers the
    /// `Location` to send the browser to.
    pub async fn finish_external(
        &self,
        state: &str,
        code: &str,
        browser_secret: Option<&str>,
    ) -> Result<String, ApproveError> {
        let external = self.checks.external.as_ref().ok_or(ApproveError::ExternalUnavailable)?;
        let pending = self.take_pending(external, state, browser_secret).await?;
        let request = request_from_json(&pending.request_json);
        let validated = self.validate_authorization(&request).await?;
        let identity = external
            .provider
            .identity(code, &pending.pkce_verifier, &pending.nonce)
            .await?;
        let sign_in = self.checks.accounts.as_ref().ok_or(ApproveError::ExternalUnavailable)?;
        let signed_in = match sign_in.accounts.sign_in_external(&identity).await {
            Ok(signed_in) => signed_in,
            Err(AccountServiceError::Storage(e)) => return Err(e.into()),
            Err(e) => return Err(ApproveError::SignIn(e)),
        };
        // The address the sign-in started from, for the audit trail (the return may come through
        // another replica or proxy hop).
        tracing::info!(
            user_id = %signed_in.account.user_id,
            issuer = %identity.issuer,
            client_address = pending.client_address.as_deref().unwrap_or("-"),
            "signed in through the identity provider"
        );
        let minted = self.mint_for_account(&validated, signed_in).await?;
        self.issue_code(&validated, minted).await
    }

    /// The provider answered with an error (the person declined there): the client gets
    /// `access_denied`, and the sign-in under way is spent.
    pub async fn abandon_external(&self, state: &str, browser_secret: Option<&str>) -> Result<String, ApproveError> {
        let external = self.checks.external.as_ref().ok_or(ApproveError::ExternalUnavailable)?;
        let pending = self.take_pending(external, state, browser_secret).await?;
        Ok(self.deny(&request_from_json(&pending.request_json)).await?)
    }

    async fn take_pending(
        &self,
        external: &ExternalSignIn,
        state: &str,
        browser_secret: Option<&str>,
    ) -> Result<PendingExternalSignIn, ApproveError> {
        let pending = external
            .pending
            .take(&token_hash(state))
            .await?
            .ok_or(ApproveError::ExternalStateUnknown)?;
        let same_browser = browser_secret.is_some_and(|secret| token_hash(secret) == pending.browser_hash);
        if !same_browser || pending.expires_at <= self.ports.clock.now() {
            return Err(ApproveError::ExternalStateUnknown);
        }
        Ok(pending)
    }
}

fn request_to_json(r: &AuthorizationRequest) -> String {
    let fields = [
        ("response_type", &r.response_type),
        ("client_id", &r.client_id),
        ("redirect_uri", &r.redirect_uri),
        ("code_challenge", &r.code_challenge),
        ("code_challenge_method", &r.code_challenge_method),
        ("state", &r.state),
        ("scope", &r.scope),
        ("resource", &r.resource),
    ];
    let object: Map<String, Value> = fields
        .into_iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| (name.to_owned(), Value::String(v.clone()))))
        .collect();
    Value::Object(object).to_string()
}

fn request_from_json(json: &str) -> AuthorizationRequest {
    let object: Map<String, Value> = serde_json::from_str(json).unwrap_or_default();
    let get = |name: &str| object.get(name).and_then(Value::as_str).map(str::to_owned);
    AuthorizationRequest {
        response_type: get("response_type"),
        client_id: get("client_id"),
        redirect_uri: get("redirect_uri"),
        code_challenge: get("code_challenge"),
        code_challenge_method: get("code_challenge_method"),
        state: get("state"),
        scope: get("scope"),
        resource: get("resource"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_request_survives_the_round_trip_through_the_database() {
        let request = AuthorizationRequest {
            response_type: Some("code".into()),
            client_id: Some("c1".into()),
            redirect_uri: Some("http://127.0.0.1:1/cb?a=\"b\"".into()),
            state: Some("s t".into()),
            resource: None,
            ..AuthorizationRequest::default()
        };
        assert_eq!(request_from_json(&request_to_json(&request)), request);
    }
}
