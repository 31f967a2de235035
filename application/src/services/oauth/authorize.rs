//! `GET /oauth/authorize`: the request is checked completely before any consent is asked for.
//! The client and its redirect URI are checked first: until both are known, nothing may be sent
//! to the redirect URI. Later failures are [`RejectedAuthorization`]s: the error the client would
//! hear at that verified URI (`error`, `state` and `iss`: RFC 6749 section 4.1.2.1, RFC 9207),
//! which the person is shown and may take back to the client, but which is never sent there
//! unasked. Registration is open, so a verified redirect URI is only one its registrant chose:
//! redirecting every broken request to it would make this origin a redirector to any page
//! (RFC 9700 section 4.11.2).

use svc_domain::oauth::{CodeChallenge, Issuer, OAuthClient, RedirectUri, ResourceIndicator};

use super::{ClientDocumentRefused, FindClientError, OAuthService};
use crate::ports::RepositoryError;

/// The longest `state` or `scope` kept: each travels with the request through the consent page,
/// a sign-in at an external provider (stored until the provider returns) and back; a client's
/// state is a nonce and its scope a word, not a payload.
pub const PARAMETER_MAX_BYTES: usize = 2048;

/// The authorization request's parameters as sent (the consent form echoes them back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationRequest {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    /// Advertised as `mcp`; not enforced.
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// A request that may go on to the consent step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedAuthorization {
    pub client: OAuthClient,
    pub redirect_uri: RedirectUri,
    pub code_challenge: CodeChallenge,
    pub state: String,
    pub resource: ResourceIndicator,
    /// The `resource` parameter verbatim, which the token request must repeat if it sends one.
    pub resource_raw: Option<String>,
}

/// The error codes an authorization request is answered with at the client's redirect URI (RFC
/// 6749 section 4.1.2.1; `invalid_target` from RFC 8707).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizationErrorCode {
    InvalidRequest,
    UnsupportedResponseType,
    InvalidTarget,
    AccessDenied,
}

impl AuthorizationErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidTarget => "invalid_target",
            Self::AccessDenied => "access_denied",
        }
    }
}

/// An error for the client at its verified redirect URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRedirect {
    pub redirect_uri: RedirectUri,
    pub error: AuthorizationErrorCode,
    pub description: String,
    pub state: Option<String>,
}

impl ErrorRedirect {
    /// `redirect_uri?error=...&error_description=...[&state=...]&iss=...`
    pub fn location(&self, issuer: &Issuer) -> String {
        let mut params = vec![
            ("error", self.error.as_str()),
            ("error_description", self.description.as_str()),
        ];
        if let Some(state) = &self.state {
            params.push(("state", state));
        }
        params.push(("iss", issuer.as_str()));
        self.redirect_uri.with_params(&params)
    }
}

/// A request refused after its client and redirect URI were verified: shown to the person, who
/// may follow a link back to the client carrying `answer`; never redirected there unasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedAuthorization {
    pub client: OAuthClient,
    pub answer: ErrorRedirect,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthorizeError {
    /// The client or its redirect URI is unknown: shown to the person, never redirected.
    #[error("{0}")]
    NotRedirectable(&'static str),
    /// A URL `client_id` whose metadata document was refused: shown, never redirected.
    #[error(transparent)]
    ClientDocument(#[from] ClientDocumentRefused),
    /// The request is invalid; its client and redirect URI are verified.
    #[error("{}: {}", .0.answer.error.as_str(), .0.answer.description)]
    Rejected(Box<RejectedAuthorization>),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

impl OAuthService {
    /// The client and its verified redirect URI: until both are known, an error is shown, never
    /// redirected.
    async fn redirect_target(
        &self,
        request: &AuthorizationRequest,
    ) -> Result<(OAuthClient, RedirectUri), AuthorizeError> {
        let client_id = present(&request.client_id).ok_or(AuthorizeError::NotRedirectable("client_id is required"))?;
        let client = self
            .find_client(client_id)
            .await?
            .ok_or(AuthorizeError::NotRedirectable("the client_id is not registered"))?;
        let presented =
            present(&request.redirect_uri).ok_or(AuthorizeError::NotRedirectable("redirect_uri is required"))?;
        let redirect_uri =
            client
                .registered_redirect_uri(presented)
                .cloned()
                .ok_or(AuthorizeError::NotRedirectable(
                    "the redirect_uri is not registered for this client",
                ))?;
        Ok((client, redirect_uri))
    }

    /// The answer to a request that sent `resource` more than once. RFC 8707 lets a client ask
    /// for several resources, but a token here serves one, so it is `invalid_target` once the
    /// client and its redirect URI are verified.
    pub async fn refuse_several_resources(&self, request: &AuthorizationRequest) -> AuthorizeError {
        match self.redirect_target(request).await {
            Ok((client, redirect_uri)) => rejected(
                client,
                redirect_uri,
                request,
                AuthorizationErrorCode::InvalidTarget,
                "only one resource may be requested".into(),
            ),
            Err(error) => error,
        }
    }

    pub async fn validate_authorization(
        &self,
        request: &AuthorizationRequest,
    ) -> Result<ValidatedAuthorization, AuthorizeError> {
        use AuthorizationErrorCode::{InvalidRequest, InvalidTarget, UnsupportedResponseType};
        let (client, redirect_uri) = self.redirect_target(request).await?;
        let fail =
            |error, description: String| rejected(client.clone(), redirect_uri.clone(), request, error, description);
        match present(&request.response_type) {
            Some("code") => {}
            Some(_) => return Err(fail(UnsupportedResponseType, "response_type must be code".into())),
            None => return Err(fail(InvalidRequest, "response_type is required".into())),
        }
        let state = present(&request.state).ok_or_else(|| fail(InvalidRequest, "state is required".into()))?;
        for (name, value) in [("state", Some(state)), ("scope", request.scope.as_deref())] {
            if value.is_some_and(|v| v.len() > PARAMETER_MAX_BYTES) {
                return Err(fail(
                    InvalidRequest,
                    format!("{name} is longer than {PARAMETER_MAX_BYTES} bytes"),
                ));
            }
        }
        let code_challenge = CodeChallenge::parse(
            request.code_challenge.as_deref(),
            request.code_challenge_method.as_deref(),
        )
        .map_err(|e| fail(InvalidRequest, e.to_string()))?;
        let unknown = || fail(InvalidTarget, "the resource is not served by this server".into());
        let resource = ResourceIndicator::classify(&self.issuer, request.resource.as_deref()).map_err(|_| unknown())?;
        if !self.ports.resources.accepts(&self.issuer, &resource).await? {
            return Err(unknown());
        }
        Ok(ValidatedAuthorization {
            state: state.to_owned(),
            client,
            redirect_uri,
            code_challenge,
            resource,
            resource_raw: request.resource.clone(),
        })
    }
}

fn rejected(
    client: OAuthClient,
    redirect_uri: RedirectUri,
    request: &AuthorizationRequest,
    error: AuthorizationErrorCode,
    description: String,
) -> AuthorizeError {
    let answer = ErrorRedirect {
        redirect_uri,
        error,
        description,
        state: request.state.clone(),
    };
    AuthorizeError::Rejected(Box::new(RejectedAuthorization { client, answer }))
}

impl From<FindClientError> for AuthorizeError {
    fn from(e: FindClientError) -> Self {
        match e {
            FindClientError::Refused(refused) => Self::ClientDocument(refused),
            FindClientError::Storage(storage) => Self::Storage(storage),
        }
    }
}
