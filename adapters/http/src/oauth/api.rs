//! The OAuth routes as poem-openapi operations: poem-openapi routes them and documents them in
//! `/openapi.json`; each operation hands the request to its handler unchanged and returns the
//! handler's response unchanged (see `crate::openapi` for why).

use std::sync::Arc;

use poem::web::Data;
use poem::{Body, Request};
use poem_openapi::OpenApi;
use poem_openapi::param::Path;
use poem_openapi::payload::{Form, Json};

use super::schema::{
    AppProtectedResourceAnswer, AuthorizationServerAnswer, AuthorizeAnswer, ClientRegistration, CodeChallengeMethod,
    ConsentAnswer, ConsentForm, DocumentationAnswer, ExternalCallbackAnswer, ProtectedResourceAnswer,
    RegistrationAnswer, ResponseType, TokenAnswerResponses, TokenForm,
};
use super::{authorize, discovery, external_sign_in, register, token};
use crate::openapi::{Described, QueryParam, RequestBody};
use crate::route_states::RestRoutes;

pub struct OAuthApi;

#[OpenApi]
impl OAuthApi {
    /// Authorization-server metadata (RFC 8414)
    #[oai(path = "/.well-known/oauth-authorization-server", method = "get")]
    async fn authorization_server(&self, state: Data<&Arc<RestRoutes>>) -> Described<AuthorizationServerAnswer> {
        Described::new(discovery::authorization_server(&state))
    }

    /// Protected-resource metadata of the universal resource `<issuer>/mcp` (RFC 9728)
    #[oai(path = "/.well-known/oauth-protected-resource", method = "get")]
    async fn protected_resource(&self, state: Data<&Arc<RestRoutes>>) -> Described<ProtectedResourceAnswer> {
        Described::new(discovery::protected_resource(&state))
    }

    /// Protected-resource metadata, at the path-suffixed form clients derive from `/mcp`
    #[oai(path = "/.well-known/oauth-protected-resource/mcp", method = "get")]
    async fn protected_resource_mcp(&self, state: Data<&Arc<RestRoutes>>) -> Described<ProtectedResourceAnswer> {
        Described::new(discovery::protected_resource(&state))
    }

    /// Protected-resource metadata of the operator route `<issuer>/ops`
    #[oai(path = "/.well-known/oauth-protected-resource/ops", method = "get")]
    async fn protected_resource_ops(&self, state: Data<&Arc<RestRoutes>>) -> Described<ProtectedResourceAnswer> {
        Described::new(discovery::ops_protected_resource(&state))
    }

    /// Protected-resource metadata of one app's resource `<issuer>/apps/<appId>`
    ///
    /// 404 unless the resource validator knows the app.
    #[oai(path = "/.well-known/oauth-protected-resource/apps/:app_id", method = "get")]
    async fn app_protected_resource(
        &self,
        app_id: Path<String>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<AppProtectedResourceAnswer> {
        Described::new(discovery::app_protected_resource(&app_id, false, &state).await)
    }

    /// Protected-resource metadata of one app's endpoint `<issuer>/apps/<appId>/mcp`
    #[oai(path = "/.well-known/oauth-protected-resource/apps/:app_id/mcp", method = "get")]
    async fn app_protected_resource_mcp(
        &self,
        app_id: Path<String>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<AppProtectedResourceAnswer> {
        Described::new(discovery::app_protected_resource(&app_id, true, &state).await)
    }

    /// How to connect (the `resource_documentation` page)
    #[oai(path = "/oauth/docs", method = "get")]
    async fn documentation(&self, state: Data<&Arc<RestRoutes>>) -> Described<DocumentationAnswer> {
        Described::new(discovery::documentation(&state))
    }

    /// Dynamic client registration (RFC 7591)
    ///
    /// Open registration, rate limited per client address. The body is read as JSON whatever its
    /// `Content-Type`.
    #[oai(path = "/oauth/register", method = "post")]
    async fn register(
        &self,
        req: &Request,
        body: RequestBody<Body, Json<ClientRegistration>>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<RegistrationAnswer> {
        Described::new(register::register(req, body.0, &state).await)
    }

    /// Authorization request: checks it, then shows the consent form
    ///
    /// Or redirects to the configured consent URL. A parameter sent twice is refused.
    #[oai(path = "/oauth/authorize", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn authorize(
        &self,
        req: &Request,
        state: Data<&Arc<RestRoutes>>,
        #[oai(name = "response_type")] _response_type: QueryParam<ResponseType, true>,
        /// From registration.
        #[oai(name = "client_id")]
        _client_id: QueryParam<String, true>,
        /// Byte-identical to a registered redirect URI.
        #[oai(name = "redirect_uri")]
        _redirect_uri: QueryParam<String, true>,
        /// base64url(SHA-256(code_verifier)), 43 characters.
        #[oai(name = "code_challenge", validator(pattern = "^[A-Za-z0-9_-]{43}$"))]
        _code_challenge: QueryParam<String, true>,
        #[oai(name = "code_challenge_method")] _code_challenge_method: QueryParam<CodeChallengeMethod, true>,
        /// Opaque, echoed on the redirect.
        #[oai(name = "state")]
        _state_param: QueryParam<String, true>,
        /// `mcp` (advertised, not enforced).
        #[oai(name = "scope")]
        _scope: QueryParam<String, true>,
        /// RFC 8707 indicator: `<issuer>`, `<issuer>/mcp`, `<issuer>/apps/<appId>` or
        /// `<issuer>/apps/<appId>/mcp`; absent is universal. Sent twice: `invalid_target`.
        #[oai(name = "resource")]
        _resource: QueryParam<String, false>,
    ) -> Described<AuthorizeAnswer> {
        Described::new(authorize::show(req, &state).await)
    }

    /// The consent form's answer
    ///
    /// The request's parameters plus exactly one of `pair_code` or `api_key`, or `action=deny`.
    /// Read as a form whatever its `Content-Type`; a field sent twice is refused.
    #[oai(path = "/oauth/authorize", method = "post")]
    async fn consent(
        &self,
        req: &Request,
        body: RequestBody<Body, Form<ConsentForm>>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<ConsentAnswer> {
        Described::new(authorize::answer(req, body.0, &state).await)
    }

    /// The external OpenID Connect provider's return (hosted mode)
    ///
    /// `state` and `code` (or `error`) from the provider; the sign-in must have started in the
    /// same browser (its cookie). 404 unless `[hosted.oidc]` is configured.
    #[oai(path = "/oauth/oidc/callback", method = "get")]
    async fn external_callback(
        &self,
        req: &Request,
        state: Data<&Arc<RestRoutes>>,
        /// The `state` svc sent to the provider.
        #[oai(name = "state")]
        _provider_state: QueryParam<String, false>,
        /// The provider's authorization code.
        #[oai(name = "code")]
        _code: QueryParam<String, false>,
        /// The provider's error (the person declined there).
        #[oai(name = "error")]
        _error: QueryParam<String, false>,
    ) -> Described<ExternalCallbackAnswer> {
        Described::new(external_sign_in::callback(req, &state).await)
    }

    /// Token request: the authorization-code grant
    ///
    /// Read as a form whatever its `Content-Type`; a field sent twice is `invalid_request`.
    #[oai(path = "/oauth/token", method = "post")]
    async fn token(
        &self,
        body: RequestBody<Body, Form<TokenForm>>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<TokenAnswerResponses> {
        Described::new(token::token(body.0, &state).await)
    }
}
