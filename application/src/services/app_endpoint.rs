//! Who may use a per-app endpoint `/apps/<appId>/mcp` (Document 1, "Endpoint-level refusal").
//!
//! Order matters and is the spec's: an anonymous or unknown bearer is unauthenticated; a key
//! locked to another app is refused before the app is looked up; a missing (never existed or
//! deleted, i.e. deprovisioned) app is refused with the `app_deprovisioned` refusal before the
//! caller's own standing on it is read; a live app the caller does not own is a bare denial.

use super::agent::Caller;
use super::auth::{AuthError, AuthService};

#[derive(Debug, thiserror::Error)]
pub enum EndpointDenial {
    /// No bearer, or one no key store knows: HTTP 401.
    #[error(transparent)]
    Unauthenticated(AuthError),
    /// Bound to another app, or not allowed on this live app: a bare HTTP 403.
    #[error("forbidden")]
    Forbidden,
    /// The endpoint no longer serves the app: HTTP 403 with the `app_deprovisioned` refusal.
    #[error("app {app_id} not found")]
    AppDeprovisioned { app_id: String },
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl AuthService {
    /// Resolves the caller of `/apps/<endpoint_app_id>/mcp`, scoped to that app.
    pub async fn authenticate_for_app(
        &self,
        bearer: Option<&str>,
        endpoint_app_id: &str,
    ) -> Result<Caller, EndpointDenial> {
        let presented = bearer.map(str::trim).filter(|b| !b.is_empty());
        if let (Some(federation), Some(token)) = (self.federation(), presented)
            && federation.claims_jwt(token)
        {
            return federation.caller(self.apps().as_ref(), token, endpoint_app_id).await;
        }
        let super::auth::Identity {
            principal_id,
            locked_app,
            key_id,
        } = self.identify(bearer).await.map_err(|error| match error {
            AuthError::Internal(cause) => EndpointDenial::Internal(cause),
            AuthError::AppDeprovisioned(app_id) => EndpointDenial::AppDeprovisioned { app_id },
            other => EndpointDenial::Unauthenticated(other),
        })?;
        if locked_app.as_deref().is_some_and(|locked| locked != endpoint_app_id) {
            return Err(EndpointDenial::Forbidden);
        }
        let app = self
            .apps()
            .get(endpoint_app_id)
            .await
            .map_err(|e| EndpointDenial::Internal(e.into()))?
            .ok_or_else(|| EndpointDenial::AppDeprovisioned {
                app_id: endpoint_app_id.to_owned(),
            })?;
        // A key locked to this app is bound to it whoever owns it; a universal key only to the
        // apps of its own principal.
        if locked_app.is_none() && app.owner_id != principal_id {
            return Err(EndpointDenial::Forbidden);
        }
        // An app set to `federated` takes no native key, its owner's included.
        if let Some(federation) = self.federation() {
            let settings = federation
                .settings
                .get(endpoint_app_id)
                .await
                .map_err(|e| EndpointDenial::Internal(e.into()))?
                .unwrap_or_default();
            if !settings.effective_auth_mode().admits_native() {
                return Err(EndpointDenial::Forbidden);
            }
        }
        Ok(Caller {
            principal_id,
            app_id: app.app_id,
            key_id,
        })
    }
}
