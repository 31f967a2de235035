//! The federated half of the per-app endpoint check: a JWT bearer on `/apps/<appId>/mcp`.
//!
//! Document 1's order, with what each step may read:
//! 1. a token whose audience is not this app is bound elsewhere: bare 403 before any lookup
//!    (read from the unverified token, so nothing is fetched for it);
//! 2. the app has no federation issuer (or does not admit federated callers), or the token names
//!    another issuer: bare 403;
//! 3. the token is verified against the issuer's keys; a bad one is an invalid credential (401);
//! 4. the app is gone: the `app_deprovisioned` refusal, before the subject's deny status is read;
//! 5. a denied subject: bare 403.

use std::sync::Arc;

use super::agent::Caller;
use super::app_endpoint::EndpointDenial;
use super::auth::AuthError;
use crate::ports::agent::AppRepository;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::federation::FederatedTokenVerifier;

/// Longest bearer taken for a JWT; a longer one is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The principal of a federated caller: `<iss>#<sub>`.
pub fn federated_principal(issuer: &str, subject: &str) -> String {
    format!("{issuer}#{subject}")
}

/// Whether `principal_id` is a federated caller's (an issuer URL, `#`, a subject): no user id,
/// key owner or app id has that shape.
pub fn is_federated_principal(principal_id: &str) -> bool {
    principal_id
        .split_once('#')
        .is_some_and(|(issuer, _)| issuer.contains("://"))
}

/// The ports the federated check needs; wired in every deployment (an app without an issuer
/// simply admits no federated caller).
#[derive(Clone)]
pub struct Federation {
    pub verifier: Arc<dyn FederatedTokenVerifier>,
    pub settings: Arc<dyn AppSettingsRepository>,
}

impl Federation {
    pub(crate) fn claims_jwt(&self, bearer: &str) -> bool {
        bearer.len() > MAX_TOKEN_BYTES || self.verifier.is_jwt(bearer)
    }

    pub(crate) async fn caller(
        &self,
        apps: &dyn AppRepository,
        token: &str,
        endpoint_app_id: &str,
    ) -> Result<Caller, EndpointDenial> {
        let invalid = |reason: &dyn std::fmt::Display| {
            tracing::info!(app_id = endpoint_app_id, %reason, "federated token refused");
            EndpointDenial::Unauthenticated(AuthError::InvalidToken)
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid(&"token larger than the limit"));
        }
        let claimed = self.verifier.peek(token).map_err(|e| invalid(&e))?;
        if !claimed.audiences.iter().any(|aud| aud == endpoint_app_id) {
            return Err(EndpointDenial::Forbidden);
        }
        let settings = self
            .settings
            .get(endpoint_app_id)
            .await
            .map_err(|e| EndpointDenial::Internal(e.into()))?
            .unwrap_or_default();
        let Some(issuer) = settings
            .federation_issuer
            .as_deref()
            .filter(|_| settings.effective_auth_mode().admits_federated())
        else {
            return Err(EndpointDenial::Forbidden);
        };
        if claimed.issuer.as_deref() != Some(issuer) {
            return Err(EndpointDenial::Forbidden);
        }
        let identity = self
            .verifier
            .verify(token, issuer, settings.jwks_url.as_deref(), endpoint_app_id)
            .await
            .map_err(|e| invalid(&e))?;
        let app = apps
            .get(endpoint_app_id)
            .await
            .map_err(|e| EndpointDenial::Internal(e.into()))?
            .ok_or_else(|| EndpointDenial::AppDeprovisioned {
                app_id: endpoint_app_id.to_owned(),
            })?;
        if settings.denies(&identity.subject) {
            return Err(EndpointDenial::Forbidden);
        }
        Ok(Caller {
            principal_id: federated_principal(&identity.issuer, &identity.subject),
            app_id: app.app_id,
            key_id: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_url_and_a_subject_make_a_federated_principal() {
        assert!(is_federated_principal(&federated_principal(
            "https://id.example",
            "u#1"
        )));
        for native in ["usr_abc", "owner", "01HZAPP", "a#b", ""] {
            assert!(!is_federated_principal(native), "{native}");
        }
    }
}
