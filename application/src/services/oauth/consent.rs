//! `POST /oauth/authorize`: the consent step. The person proves who they are with exactly one
//! credential: the pair code (exchanged through the pairing service for a fresh key), a key the
//! `/mcp` check accepts (a fresh key is minted for its owner), or, in hosted mode, an account's
//! email and password (a fresh key is minted for the account). Either way the fresh key, labelled
//! with the client's name, is what the token endpoint hands out, and the code carries it sealed.
//! Redeeming the code revokes the keys the client was given before (`client_keys`).

use svc_domain::oauth::{AuthorizationCode, CodeBinding, KeyGrant, ResourceIndicator};
use svc_domain::wallet::Principal;

use super::OAuthService;
use super::authorize::{
    AuthorizationErrorCode, AuthorizationRequest, AuthorizeError, ErrorRedirect, ValidatedAuthorization,
};
use super::key_label::key_label;
use crate::ports::RepositoryError;
use crate::ports::external_identity::ExternalSignInError;
use crate::services::accounts::{AccountServiceError, SignIn, SignedIn};
use crate::services::auth::AuthError;
use crate::services::operator::{IssueConnectorKey, RevokeConnectorKey};
use crate::services::pairing::PairingError;

/// Random base62 characters of an authorization code: about 256 bits.
const CODE_CHARS: usize = 43;

#[derive(Debug, Clone)]
pub enum ConsentCredential {
    PairCode(String),
    ApiKey(String),
    /// A hosted account's email and password (`sign_up`: create it, when sign-up is open).
    Account(SignIn),
}

#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    #[error(transparent)]
    Authorize(#[from] AuthorizeError),
    /// The person's credential was accepted but may not grant what the client asked for (an app
    /// that is not theirs, or another app than the key's): the client hears `access_denied` at
    /// its redirect URI at once, as when the person declines. That answers the person's own
    /// choice on the consent page, not a crafted link.
    #[error("{}: {}", .0.error.as_str(), .0.description)]
    Denied(ErrorRedirect),
    /// The pair code or key was not accepted: the person may try again.
    #[error("the pair code or key was not accepted")]
    CredentialRefused,
    /// `--dev-allow-all` prints no pair code.
    #[error("this server has no pair code; use a key")]
    PairingUnavailable,
    /// The sign-in was refused (wrong email or password, sign-up closed, a password too short)
    /// or rate limited; the account error says which.
    #[error(transparent)]
    SignIn(AccountServiceError),
    /// Sign-in with the external identity provider is not configured.
    #[error("sign-in with an identity provider is not configured on this server")]
    ExternalUnavailable,
    /// The provider's return names no sign-in under way: an unknown, used or expired `state`, or
    /// one started in another browser.
    #[error("this sign-in is unknown, was already used or has expired")]
    ExternalStateUnknown,
    /// The provider or its answer failed a check.
    #[error(transparent)]
    External(#[from] ExternalSignInError),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl From<RepositoryError> for ApproveError {
    fn from(e: RepositoryError) -> Self {
        Self::Authorize(AuthorizeError::Storage(e))
    }
}

fn internal(e: impl std::fmt::Display) -> ApproveError {
    ApproveError::Internal(anyhow::anyhow!("{e}"))
}

/// The key minted at consent.
pub(super) struct Minted {
    grant: KeyGrant,
    token: String,
}

impl OAuthService {
    /// Approves the request with `credential`: mints the key and a code bound to the request, and
    /// answers the `Location` to send the browser to (`redirect_uri?code&state&iss`).
    pub async fn approve(
        &self,
        request: &AuthorizationRequest,
        credential: ConsentCredential,
    ) -> Result<String, ApproveError> {
        let validated = self.validate_authorization(request).await?;
        let minted = match credential {
            ConsentCredential::PairCode(code) => self.mint_with_pair_code(&validated, &code).await?,
            ConsentCredential::ApiKey(key) => self.mint_with_key(&validated, &key).await?,
            ConsentCredential::Account(attempt) => self.mint_with_account(&validated, attempt).await?,
        };
        self.issue_code(&validated, minted).await
    }

    /// Stores a code for `minted`, bound to the request, and answers the `Location` to send the
    /// browser to (`redirect_uri?code&state&iss`).
    pub(super) async fn issue_code(
        &self,
        validated: &ValidatedAuthorization,
        minted: Minted,
    ) -> Result<String, ApproveError> {
        let code = self.ports.ids.base62(CODE_CHARS);
        let binding = CodeBinding {
            client_id: validated.client.client_id.clone(),
            redirect_uri: validated.redirect_uri.as_str().to_owned(),
            code_challenge: validated.code_challenge.clone(),
            resource: validated.resource_raw.clone(),
        };
        let now = self.ports.clock.now();
        let stored = AuthorizationCode::issue(&code, binding, minted.grant, &minted.token, now, self.code_lifetime);
        self.ports.codes.insert(&stored).await?;
        Ok(validated.redirect_uri.with_params(&[
            ("code", code.as_str()),
            ("state", validated.state.as_str()),
            ("iss", self.issuer.as_str()),
        ]))
    }

    /// The person declined: `redirect_uri?error=access_denied&state&iss`.
    pub async fn deny(&self, request: &AuthorizationRequest) -> Result<String, AuthorizeError> {
        let validated = self.validate_authorization(request).await?;
        Ok(denied(&validated, "the request was declined").location(&self.issuer))
    }

    async fn mint_with_pair_code(
        &self,
        validated: &ValidatedAuthorization,
        code: &str,
    ) -> Result<Minted, ApproveError> {
        let pairing = self.checks.pairing.as_ref().ok_or(ApproveError::PairingUnavailable)?;
        // A per-app resource locks the key to that app, as with a typed key (Document 2: the code
        // and any token minted from it are captured against that app).
        let app_id = validated.resource.app_id().map(str::to_owned);
        let label = Some(key_label(&validated.client));
        let (key_id, token) = match pairing.exchange_for_app(code, label, app_id).await {
            Ok(pair) => pair,
            Err(PairingError::WrongCode) => return Err(ApproveError::CredentialRefused),
            Err(PairingError::Internal(e)) => return Err(ApproveError::Internal(e)),
            // The label is a registered client name, already held to a stricter rule.
            Err(e @ PairingError::InvalidClientName(_)) => return Err(ApproveError::Internal(e.into())),
        };
        // The minted key goes through the same check as a key typed into the form.
        let caller = self.checks.auth.authenticate(Some(&token)).await.map_err(internal)?;
        let grant = KeyGrant {
            key_id,
            owner_id: caller.principal_id.clone(),
        };
        if let Some(app_id) = validated.resource.app_id()
            && !self.owns_app(&caller.principal_id, app_id).await?
        {
            self.revoke_quietly(&grant).await;
            return Err(denied(validated, "the app is not yours").into());
        }
        Ok(Minted { grant, token })
    }

    async fn mint_with_key(&self, validated: &ValidatedAuthorization, key: &str) -> Result<Minted, ApproveError> {
        let (caller, app_locked) = match self.checks.auth.authenticate_scoped(Some(key)).await {
            Ok(scoped) => (scoped.caller, scoped.app_locked),
            Err(AuthError::Anonymous | AuthError::InvalidToken | AuthError::AppDeprovisioned(_)) => {
                return Err(ApproveError::CredentialRefused);
            }
            Err(AuthError::Internal(e)) => return Err(ApproveError::Internal(e)),
        };
        // The new key lives no longer than the one typed: consent never widens a credential.
        let expires_at = match self.checks.keys.authenticate(key).await {
            Ok(typed) => typed.and_then(|typed| typed.expires_at),
            Err(e) => return Err(internal(e)),
        };
        // A key locked to an app, its owner's default one included, mints a key locked to it.
        let credential_app = app_locked.then(|| caller.app_id.clone());
        let app_id = match &validated.resource {
            ResourceIndicator::Universal => credential_app,
            ResourceIndicator::App(app_id) => {
                let allowed = credential_app.as_ref().is_none_or(|locked| locked == app_id)
                    && self.owns_app(&caller.principal_id, app_id).await?;
                if !allowed {
                    return Err(denied(validated, "the key may not act for this app").into());
                }
                Some(app_id.clone())
            }
        };
        let issued = self
            .checks
            .keys
            .issue(IssueConnectorKey {
                caller_user_id: caller.principal_id.clone(),
                name: Some(key_label(&validated.client)),
                app_id,
                expires_at,
            })
            .await
            .map_err(internal)?;
        Ok(Minted {
            grant: KeyGrant {
                key_id: issued.summary.id,
                owner_id: caller.principal_id,
            },
            token: issued.plaintext_key.expose().to_owned(),
        })
    }

    /// Signs the person in (or up) and mints a key of the account, labelled with the client's
    /// name; a per-app resource must be one of the account's apps. A first sign-in gets the
    /// free credit.
    async fn mint_with_account(
        &self,
        validated: &ValidatedAuthorization,
        attempt: SignIn,
    ) -> Result<Minted, ApproveError> {
        let sign_in = self.checks.accounts.as_ref().ok_or(ApproveError::CredentialRefused)?;
        let signed_in = match sign_in.accounts.sign_in(attempt).await {
            Ok(signed_in) => signed_in,
            Err(AccountServiceError::Storage(e)) => return Err(e.into()),
            Err(e) => return Err(ApproveError::SignIn(e)),
        };
        self.mint_for_account(validated, signed_in).await
    }

    /// Mints a key of a signed-in account, labelled with the client's name; a per-app resource
    /// must be one of the account's apps. A first sign-in gets the free credit.
    pub(super) async fn mint_for_account(
        &self,
        validated: &ValidatedAuthorization,
        signed_in: SignedIn,
    ) -> Result<Minted, ApproveError> {
        let sign_in = self.checks.accounts.as_ref().ok_or(ApproveError::CredentialRefused)?;
        let user_id = signed_in.account.user_id.clone();
        if signed_in.first_sign_in
            && let Some(credits) = &sign_in.credits
        {
            credits
                .welcome(&Principal::user(user_id.clone()))
                .await
                .map_err(internal)?;
        }
        let app_id = match &validated.resource {
            ResourceIndicator::Universal => None,
            ResourceIndicator::App(app_id) => {
                if !self.owns_app(&user_id, app_id).await? {
                    return Err(denied(validated, "the app is not yours").into());
                }
                Some(app_id.clone())
            }
        };
        let issued = self
            .checks
            .keys
            .issue(IssueConnectorKey {
                caller_user_id: user_id.clone(),
                name: Some(key_label(&validated.client)),
                app_id,
                expires_at: None,
            })
            .await
            .map_err(internal)?;
        Ok(Minted {
            grant: KeyGrant {
                key_id: issued.summary.id,
                owner_id: user_id,
            },
            token: issued.plaintext_key.expose().to_owned(),
        })
    }

    async fn owns_app(&self, principal_id: &str, app_id: &str) -> Result<bool, RepositoryError> {
        Ok(self
            .ports
            .apps
            .get(app_id)
            .await?
            .is_some_and(|app| app.owner_id == principal_id))
    }

    /// Revokes a key that can no longer reach its client (or that a newer one replaced); a
    /// failure is logged, not answered. `true` when the key is revoked now.
    pub(super) async fn revoke_quietly(&self, grant: &KeyGrant) -> bool {
        let command = RevokeConnectorKey {
            caller_user_id: grant.owner_id.clone(),
            caller_locked_app: None,
            key_id: grant.key_id.clone(),
        };
        match self.checks.keys.revoke(command).await {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(key_id = %grant.key_id, error = %error, "could not revoke an OAuth key");
                false
            }
        }
    }
}

fn denied(validated: &ValidatedAuthorization, description: &str) -> ErrorRedirect {
    ErrorRedirect {
        redirect_uri: validated.redirect_uri.clone(),
        error: AuthorizationErrorCode::AccessDenied,
        description: description.to_owned(),
        state: Some(validated.state.clone()),
    }
}

impl From<ErrorRedirect> for ApproveError {
    fn from(redirect: ErrorRedirect) -> Self {
        Self::Denied(redirect)
    }
}
