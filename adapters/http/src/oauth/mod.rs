//! The OAuth 2.1 surface for MCP hosts (Document 2), present when the server runs with `--oauth`:
//!
//! - `GET /.well-known/oauth-protected-resource` (also at `/mcp` and `/apps/<appId>` suffixes) and
//!   `GET /.well-known/oauth-authorization-server`: discovery;
//! - `POST /oauth/register`: open dynamic registration, rate limited per client address;
//! - `GET /oauth/authorize`: checks the request, then shows the consent form (or redirects to
//!   the configured consent URL); a request that fails a check gets an error page, never a
//!   redirect to the client; `POST /oauth/authorize`: the consent form's answer, from pages of
//!   the issuer's or the consent URL's origin only (`consent_origin`);
//! - `POST /oauth/token`: the authorization-code grant.
//!
//! Without `--oauth` every one of these paths answers 404. poem-openapi routes them (`api`) and
//! describes them in `/openapi.json` (`schema`).

mod api;
mod authorize;
mod consent_origin;
mod consent_page;
mod discovery;
mod document_fetcher;
mod external_sign_in;
mod params;
mod rate_limit;
mod register;
mod rejected_page;
mod schema;
mod token;
mod unread_body;

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{IntoResponse, Response};
use svc_application::services::oauth::OAuthService;

use svc_domain::oauth::Issuer;

use crate::route_states::RestRoutes;
use consent_origin::ConsentOrigins;
use rate_limit::PerAddressLimit;

pub(crate) use api::OAuthApi;
pub(crate) use authorize::capitalised;
pub(crate) use consent_page::{escape, page as html_page};
pub use document_fetcher::{CLIENT_DOCUMENT_FETCH_SECONDS, ReqwestClientDocumentFetcher};
pub use rate_limit::{
    EXTERNAL_SIGN_IN_WINDOW_SECONDS, EXTERNAL_SIGN_INS_PER_WINDOW, REGISTRATION_WINDOW_SECONDS,
    REGISTRATIONS_PER_WINDOW,
};

/// Deployment options of the OAuth surface besides what the service holds.
#[derive(Debug, Clone, Default)]
pub struct OAuthOptions {
    /// An external consent page; absent: the built-in form.
    pub consent_url: Option<String>,
    /// Rate-limit registration and consent by the last `X-Forwarded-For` address instead of the
    /// peer address.
    pub trust_proxy: bool,
}

pub struct OAuth {
    service: OAuthService,
    options: OAuthOptions,
    /// The pages that may post the consent form.
    consent_origins: ConsentOrigins,
    registrations: PerAddressLimit,
    external_sign_ins: PerAddressLimit,
}

/// `oauth.consent_url` as the consent redirect uses it: an absolute http(s) URL. Start-up
/// checks it whether or not OAuth is on.
pub fn parse_consent_url(consent_url: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(consent_url).map_err(|e| format!("oauth.consent_url {consent_url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("oauth.consent_url {consent_url:?} must be an http(s) URL"));
    }
    Ok(parsed)
}

impl OAuth {
    /// Fails when the consent URL is not an absolute http(s) URL. Registration windows are
    /// counted in `windows` (the database, shared by replicas).
    pub fn new(
        service: OAuthService,
        options: OAuthOptions,
        windows: Arc<dyn svc_application::ports::rate_windows::SharedWindows>,
    ) -> Result<Self, String> {
        let consent_url = options.consent_url.as_deref().map(parse_consent_url).transpose()?;
        let consent_origins = ConsentOrigins::new(service.issuer().origin(), consent_url.as_ref());
        let registrations = PerAddressLimit::registrations(windows.clone(), service.clock());
        let external_sign_ins = PerAddressLimit::external_sign_ins(windows, service.clock());
        Ok(Self {
            service,
            options,
            consent_origins,
            registrations,
            external_sign_ins,
        })
    }
}

impl OAuth {
    /// The issuer string, for the banner.
    /// The service behind the surface (the server sweeps its codes).
    pub fn service(&self) -> &OAuthService {
        &self.service
    }

    pub fn issuer(&self) -> &str {
        self.service.issuer().as_str()
    }
}

/// The `WWW-Authenticate` challenges of unauthenticated MCP requests: with OAuth on, they point
/// at the protected-resource metadata (RFC 9728 section 5.1).
#[derive(Debug, Clone, Default)]
pub(crate) struct Challenges {
    issuer: Option<Issuer>,
}

impl Challenges {
    pub(crate) fn of(oauth: Option<&OAuth>) -> Self {
        Self {
            issuer: oauth.map(|o| o.service.issuer().clone()),
        }
    }

    /// The challenge of `/mcp`: its resource metadata.
    pub(crate) fn mcp(&self) -> String {
        match &self.issuer {
            Some(issuer) => format!(
                r#"Bearer realm="mcp", resource_metadata="{}""#,
                discovery::protected_resource_metadata_url(issuer)
            ),
            None => r#"Bearer realm="mcp""#.to_owned(),
        }
    }

    /// `response` with `/ops`'s challenge when it is a 401 (GET and POST). `/ops` takes the
    /// same keys as `/mcp` but is a resource of its own: RFC 9728 clients accept metadata only
    /// when the URL they asked for starts with its `resource`, and `/ops` does not start with
    /// `/mcp`.
    pub(crate) fn with_ops_challenge(&self, mut response: Response) -> Response {
        let challenge = match &self.issuer {
            Some(issuer) => format!(
                r#"Bearer realm="mcp", resource_metadata="{}""#,
                discovery::ops_resource_metadata_url(issuer)
            ),
            None => r#"Bearer realm="mcp""#.to_owned(),
        };
        if response.status() == StatusCode::UNAUTHORIZED
            && let Ok(challenge) = challenge.parse()
        {
            response.headers_mut().insert("www-authenticate", challenge);
        }
        response
    }

    /// The challenge of a per-app endpoint: the app's own resource metadata.
    pub(crate) fn app(&self, app_id: &str) -> String {
        match &self.issuer {
            Some(issuer) => format!(
                r#"Bearer realm="mcp", resource_metadata="{}""#,
                discovery::app_resource_metadata_url(issuer, app_id)
            ),
            None => r#"Bearer realm="mcp""#.to_owned(),
        }
    }
}

/// The OAuth surface, when on.
fn enabled(state: &Arc<RestRoutes>) -> Option<&OAuth> {
    state.oauth.as_ref()
}

/// What every OAuth path answers when OAuth is off.
fn not_found() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

/// Answers must not be cached: they carry codes, tokens or per-request state.
fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert("cache-control", "no-store".parse().expect("static header"));
    headers.insert("pragma", "no-cache".parse().expect("static header"));
    response
}

/// The page `GET /oauth/authorize` answers a request it cannot serve with (documented HTML, no
/// redirect), for guards in front of the route.
pub(crate) fn authorize_error_page(status: poem::http::StatusCode, message: &str) -> poem::Response {
    consent_page::error_page(status, message)
}
