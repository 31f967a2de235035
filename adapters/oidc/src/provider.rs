//! [`OidcProvider`]: the `IdentityProvider` port over `openidconnect`.

use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreJwsSigningAlgorithm, CoreProviderMetadata,
};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, SignatureVerificationError,
    TokenResponse,
};
use svc_application::ports::external_identity::{
    ExternalIdentity, ExternalSignInError, IdentityProvider, ProviderRedirect,
};
use tokio::sync::RwLock;

use crate::provider_http::ProviderHttp;

/// How long a discovery document (and the keys it names) is used before it is fetched again.
pub const METADATA_TTL: Duration = Duration::from_secs(3600);
/// Deadline of one request to the provider.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The algorithms an ID token may be signed with: public-key signatures only, whatever the
/// provider's metadata advertises. With a MAC (`HS*`) the key would be our client secret, which
/// the provider's operators and anyone it leaks to also hold, so they could mint identities;
/// `none` is no signature at all.
const ID_TOKEN_ALGORITHMS: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

type DiscoveredClient =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// `[hosted.oidc]`.
#[derive(Debug, Clone)]
pub struct OidcProviderSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub display_name: String,
    /// svc's callback, registered at the provider (`<base>/oauth/oidc/callback`).
    pub redirect_uri: String,
}

pub struct OidcProvider {
    settings: OidcProviderSettings,
    issuer: IssuerUrl,
    redirect_uri: RedirectUrl,
    http: ProviderHttp,
    client: RwLock<Option<(DiscoveredClient, Instant)>>,
}

impl OidcProvider {
    /// Fails when the issuer or the redirect URI is no URL.
    pub fn new(settings: OidcProviderSettings) -> Result<Self, String> {
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .map_err(|e| format!("hosted.oidc.issuer {:?}: {e}", settings.issuer))?;
        let redirect_uri = RedirectUrl::new(settings.redirect_uri.clone())
            .map_err(|e| format!("the OpenID Connect callback {:?}: {e}", settings.redirect_uri))?;
        let http = ProviderHttp::new(REQUEST_TIMEOUT).map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Self {
            settings,
            issuer,
            redirect_uri,
            http,
            client: RwLock::new(None),
        })
    }

    /// The client built from the provider's discovery document, fetched when missing or stale
    /// (or when `refresh`).
    async fn client(&self, refresh: bool) -> Result<DiscoveredClient, ExternalSignInError> {
        if !refresh
            && let Some((client, at)) = self.client.read().await.as_ref()
            && at.elapsed() < METADATA_TTL
        {
            return Ok(client.clone());
        }
        // `discover_async` checks that the document names this very issuer.
        let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| ExternalSignInError::Unavailable(format!("discovery: {}", error_chain(&e))))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            Some(ClientSecret::new(self.settings.client_secret.clone())),
        )
        .set_redirect_uri(self.redirect_uri.clone());
        *self.client.write().await = Some((client.clone(), Instant::now()));
        Ok(client)
    }

    /// The code exchanged (with the PKCE verifier) for the provider's ID token.
    async fn exchange(
        &self,
        client: &DiscoveredClient,
        code: &str,
        pkce_verifier: &str,
    ) -> Result<CoreIdToken, ExternalSignInError> {
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| ExternalSignInError::Unavailable(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_owned()))
            .request_async(&self.http)
            .await
            .map_err(|e| ExternalSignInError::ExchangeRefused(error_chain(&e)))?;
        response
            .id_token()
            .cloned()
            .ok_or_else(|| ExternalSignInError::TokenRejected("the token response has no ID token".into()))
    }
}

/// The ID token's claims after the checks: signature (with the provider's published keys, by a
/// public-key algorithm), issuer, audience (this client), expiry and issue time, and `nonce`.
fn verify(client: &DiscoveredClient, id_token: &CoreIdToken, nonce: &str) -> Result<ExternalIdentity, Verification> {
    // The client's verifier would allow the algorithms the provider's metadata lists.
    let verifier = client.id_token_verifier().set_allowed_algs(ID_TOKEN_ALGORITHMS);
    let claims = match id_token.claims(&verifier, &Nonce::new(nonce.to_owned())) {
        Ok(claims) => claims,
        Err(ClaimsVerificationError::SignatureVerification(SignatureVerificationError::NoMatchingKey)) => {
            return Err(Verification::UnknownKey);
        }
        // With its causes: "Signature verification failed" alone does not say which check.
        Err(e) => {
            return Err(Verification::Failed(ExternalSignInError::TokenRejected(error_chain(
                &e,
            ))));
        }
    };
    Ok(ExternalIdentity {
        issuer: claims.issuer().as_str().to_owned(),
        subject: claims.subject().as_str().to_owned(),
        email: claims.email().map(|e| e.as_str().to_owned()),
        email_verified: claims.email_verified().unwrap_or(false),
    })
}

/// An ID token signed with a key the cached discovery lacks is checked again after one fresh
/// discovery (the provider rotated its keys).
enum Verification {
    UnknownKey,
    Failed(ExternalSignInError),
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[async_trait::async_trait]
impl IdentityProvider for OidcProvider {
    fn display_name(&self) -> &str {
        &self.settings.display_name
    }

    fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    async fn redirect(&self) -> Result<ProviderRedirect, ExternalSignInError> {
        let client = self.client(false).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .set_pkce_challenge(challenge)
            .url();
        Ok(ProviderRedirect {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    async fn identity(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<ExternalIdentity, ExternalSignInError> {
        let client = self.client(false).await?;
        let id_token = self.exchange(&client, code, pkce_verifier).await?;
        match verify(&client, &id_token, nonce) {
            Ok(identity) => Ok(identity),
            Err(Verification::Failed(e)) => Err(e),
            Err(Verification::UnknownKey) => {
                tracing::info!(issuer = %self.settings.issuer, "ID token signed with an unknown key: discovering the provider again");
                let fresh = self.client(true).await?;
                verify(&fresh, &id_token, nonce).map_err(|e| match e {
                    Verification::Failed(e) => e,
                    Verification::UnknownKey => ExternalSignInError::TokenRejected(
                        "the ID token is signed with a key the provider does not publish".into(),
                    ),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
