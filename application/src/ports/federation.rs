//! Federated identities on per-app endpoints: a bearer that is a JWT from the app's federation
//! issuer (Document 1, "Endpoint-level refusal", binding).

/// What the token says about itself, read without checking its signature: enough to refuse a
/// caller bound to another app, or to a foreign issuer, before any key is fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnverifiedToken {
    pub audiences: Vec<String>,
    pub issuer: Option<String>,
}

/// A verified token's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FederatedIdentity {
    pub issuer: String,
    pub subject: String,
}

/// Why a token was not accepted; each is an invalid credential (HTTP 401) to the caller, and a
/// reason in the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("not a well-formed JWT")]
    Malformed,
    #[error("token larger than the limit")]
    Oversized,
    #[error("algorithm not accepted")]
    Algorithm,
    #[error("no key of the issuer has this kid")]
    UnknownKey,
    #[error("bad signature")]
    Signature,
    #[error("expired or not yet valid")]
    Time,
    #[error("audience or issuer does not match")]
    Binding,
    #[error("the issuer's keys could not be fetched: {0}")]
    KeysUnavailable(String),
}

#[async_trait::async_trait]
pub trait FederatedTokenVerifier: Send + Sync {
    /// Whether `bearer` has the shape of a JWT (three base64url parts, a JSON header) rather than
    /// a native key.
    fn is_jwt(&self, bearer: &str) -> bool;
    /// The token's claimed audiences and issuer, unverified.
    fn peek(&self, token: &str) -> Result<UnverifiedToken, TokenRejection>;
    /// Verifies the signature against the issuer's keys (`jwks_url`, or found by OpenID Connect
    /// discovery on `issuer`), the algorithm, `aud == audience`, `iss == issuer`, `exp` and `nbf`.
    async fn verify(
        &self,
        token: &str,
        issuer: &str,
        jwks_url: Option<&str>,
        audience: &str,
    ) -> Result<FederatedIdentity, TokenRejection>;
}
