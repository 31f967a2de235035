//! What the OAuth routes read and answer, as poem-openapi types for the OpenAPI document. The
//! handlers build their answers themselves (see `crate::openapi`), so these types are never
//! constructed: each mirrors one answer of a handler, and the schemathesis run checks the real
//! answers against them.
#![allow(dead_code, clippy::large_enum_variant)]

use poem_openapi::payload::{Html, Json};
use poem_openapi::{ApiResponse, Enum, Object};

use crate::openapi::RateLimited;

/// `response_type`: only the authorization-code flow.
#[derive(Enum)]
pub(super) enum ResponseType {
    #[oai(rename = "code")]
    Code,
}

/// `code_challenge_method`: only S256 (`plain` is refused).
#[derive(Enum)]
pub(super) enum CodeChallengeMethod {
    S256,
}

/// Authorization-server metadata (RFC 8414) with Document 2's fixed values.
#[derive(Object)]
pub(super) struct AuthorizationServerMetadata {
    /// The issuer: the public base URL without a trailing slash.
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: String,
    /// `["code"]`
    response_types_supported: Vec<String>,
    /// `["authorization_code"]`
    grant_types_supported: Vec<String>,
    /// `["S256"]`
    code_challenge_methods_supported: Vec<String>,
    /// `["none"]`: PKCE is the only client authentication.
    token_endpoint_auth_methods_supported: Vec<String>,
    /// `["mcp"]`
    scopes_supported: Vec<String>,
    /// `true` (RFC 9207).
    authorization_response_iss_parameter_supported: bool,
    /// `true`: a `client_id` may be the https URL of a Client ID Metadata Document.
    client_id_metadata_document_supported: bool,
}

/// Protected-resource metadata (RFC 9728).
#[derive(Object)]
pub(super) struct ProtectedResourceMetadata {
    /// `<issuer>/mcp`, or `<issuer>/apps/<appId>` for one app.
    resource: String,
    /// `[<issuer>]`
    authorization_servers: Vec<String>,
    /// `["header"]`
    bearer_methods_supported: Vec<String>,
    /// `<issuer>/oauth/docs`
    resource_documentation: String,
}

/// A dynamic client registration request (RFC 7591). Other client metadata is accepted and
/// ignored.
#[derive(Object)]
pub(super) struct ClientRegistration {
    /// Absolute, no fragment, no wildcard host: `https`, loopback `http` or a private-use scheme.
    #[oai(validator(min_items = 1, max_items = 10))]
    redirect_uris: Vec<String>,
    /// Printable, 1 to 100 characters.
    #[oai(validator(min_length = 1, max_length = 100))]
    client_name: Option<String>,
}

/// A registered client. No secret, ever.
#[derive(Object)]
pub(super) struct ClientInformation {
    /// A UUID (v7: time-ordered, 74 random bits; a public client's id is not a secret).
    client_id: String,
    /// Seconds since the Unix epoch.
    client_id_issued_at: i64,
    redirect_uris: Vec<String>,
    /// `["authorization_code"]`
    grant_types: Vec<String>,
    /// `["code"]`
    response_types: Vec<String>,
    /// `"none"`
    token_endpoint_auth_method: String,
    #[oai(skip_serializing_if_is_none)]
    client_name: Option<String>,
}

/// An OAuth error (RFC 6749 section 5.2, RFC 7591 section 3.2.2).
#[derive(Object)]
pub(super) struct OAuthError {
    /// `invalid_redirect_uri`, `invalid_client_metadata`, `invalid_request`, `invalid_client`,
    /// `invalid_grant`, `unsupported_grant_type`, `invalid_target`, `server_error` or
    /// `temporarily_unavailable`.
    error: String,
    error_description: String,
}

/// The consent form's answer (`application/x-www-form-urlencoded`): the authorization request's
/// parameters, echoed, plus exactly one credential, or `action=deny`.
#[derive(Object)]
pub(super) struct ConsentForm {
    response_type: ResponseType,
    client_id: String,
    redirect_uri: String,
    #[oai(validator(pattern = "^[A-Za-z0-9_-]{43}$"))]
    code_challenge: String,
    code_challenge_method: CodeChallengeMethod,
    state: String,
    scope: Option<String>,
    resource: Option<String>,
    /// The 6-digit code printed on the server's banner.
    pair_code: Option<String>,
    /// A bearer key the `/mcp` key check accepts.
    api_key: Option<String>,
    /// Hosted: the account's email (with `password`).
    email: Option<String>,
    /// Hosted: the account's password.
    password: Option<String>,
    /// `deny`: the person declined; hosted: `signup` (create the account, open sign-up) or
    /// `external` (sign in with the configured OpenID Connect provider).
    action: Option<String>,
}

/// The token request (`application/x-www-form-urlencoded`).
#[derive(Object)]
pub(super) struct TokenForm {
    /// `authorization_code`
    grant_type: String,
    code: String,
    redirect_uri: String,
    client_id: String,
    /// 43 to 128 characters of `[A-Za-z0-9._~-]` (RFC 7636).
    code_verifier: String,
    /// Must equal the authorize request's `resource` when given.
    resource: Option<String>,
}

/// The token answer: no `refresh_token`, no `expires_in`.
#[derive(Object)]
pub(super) struct TokenAnswer {
    /// A bearer key of the server's key store.
    access_token: String,
    /// `"Bearer"`
    token_type: String,
    /// `"mcp"`
    scope: String,
}

/// Answers of the discovery documents.
#[derive(ApiResponse)]
pub(super) enum AuthorizationServerAnswer {
    /// The metadata (public: any origin may read it).
    #[oai(status = 200)]
    Ok(
        Json<AuthorizationServerMetadata>,
        #[oai(header = "Access-Control-Allow-Origin")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
}

#[derive(ApiResponse)]
pub(super) enum ProtectedResourceAnswer {
    /// The metadata (public: any origin may read it).
    #[oai(status = 200)]
    Ok(
        Json<ProtectedResourceMetadata>,
        #[oai(header = "Access-Control-Allow-Origin")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
}

#[derive(ApiResponse)]
pub(super) enum AppProtectedResourceAnswer {
    /// The metadata (public: any origin may read it).
    #[oai(status = 200)]
    Ok(
        Json<ProtectedResourceMetadata>,
        #[oai(header = "Access-Control-Allow-Origin")] String,
    ),
    /// OAuth is off, or no such app.
    #[oai(status = 404)]
    NotFound,
    /// The app lookup failed (empty body).
    #[oai(status = 500)]
    Failed,
}

#[derive(ApiResponse)]
pub(super) enum DocumentationAnswer {
    /// How to connect an MCP client (under the consent page's headers).
    #[oai(status = 200)]
    Ok(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
}

#[derive(ApiResponse)]
pub(super) enum RegistrationAnswer {
    /// Registered.
    #[oai(status = 201)]
    Created(
        Json<ClientInformation>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `invalid_redirect_uri` or `invalid_client_metadata`.
    #[oai(status = 400)]
    Refused(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
    /// `invalid_request`: the body is over 64 KiB (a declared length over it is refused unread,
    /// a chunked body as soon as it passes it).
    #[oai(status = 413)]
    TooLarge(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `invalid_request`: the body did not arrive in time (it paused for the idle timeout, or
    /// took longer than the body read timeout in all). A body of no declared length gets the
    /// server's body-limit answer instead, `{ error: { code: "REQUEST_TIMEOUT", message } }`.
    #[oai(status = 408)]
    TooSlow(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// More than 10 registrations in 10 minutes from one address.
    #[oai(status = 429)]
    RateLimited(Json<RateLimited>, #[oai(header = "Retry-After")] u64),
    /// `server_error`: storage failed.
    #[oai(status = 500)]
    Failed(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `temporarily_unavailable`: the registration could not be counted against its address's
    /// window (the database did not answer), or its body was refused because the bodies
    /// arriving at once hold the server's budget for them (with `Retry-After`; a body of no
    /// declared length gets the server's `{ error: { code: "SERVER_BUSY", message } }`).
    /// Nothing was registered.
    #[oai(status = 503)]
    Uncounted(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
        /// Seconds to wait: only on the answer to a body refused for the budget.
        #[oai(header = "Retry-After")]
        Option<u64>,
    ),
}

/// `GET /oauth/authorize`.
#[derive(ApiResponse)]
pub(super) enum AuthorizeAnswer {
    /// The consent form, naming the client and where the code will go. Never framed or cached.
    #[oai(status = 200)]
    Consent(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// With a consent URL configured, to that page with every parameter plus `mcp_origin`.
    #[oai(status = 302)]
    Redirect(
        #[oai(header = "Location")] String,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// A request that fails a check: an error page, never a redirect. Once the client and its
    /// redirect URI are verified, the page names them and links back to the client with
    /// `error`, `error_description`, `state` and `iss`, for the person to follow or not.
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
    /// The request could not be checked (storage).
    #[oai(status = 500)]
    Failed(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// A client named by its metadata document's URL, while this server fetches as many
    /// documents as it does at once (16), or as many from that client's host (4).
    #[oai(status = 503)]
    Busy(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
}

/// `POST /oauth/authorize`.
#[derive(ApiResponse)]
pub(super) enum ConsentAnswer {
    /// `redirect_uri?code&state&iss`, or `error=access_denied&state&iss` (declined, or the
    /// credential may not act for the requested app).
    #[oai(status = 302)]
    Redirect(
        #[oai(header = "Location")] String,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// The form again with a notice (no credential, both, or a pair code on a server without
    /// one), or the error page (a field sent twice, unknown client or redirect URI, or a request
    /// that fails a check, as for `GET`).
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// The form again: the pair code or key was not accepted.
    #[oai(status = 401)]
    CredentialRefused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
    /// The form is over 64 KiB.
    #[oai(status = 413)]
    TooLarge(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// Posted from a page of another origin than this server's or the configured consent URL's
    /// (its `Origin`, else its `Referer`): the error page, the form unread and nothing done.
    /// Hosted: the form again, sign-up is closed; `action=external` not posted from a page of
    /// those origins (a request naming no page included).
    #[oai(status = 403)]
    Forbidden(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// More than 5 pair-code attempts a minute from one address.
    #[oai(status = 429)]
    RateLimited(Json<RateLimited>, #[oai(header = "Retry-After")] u64),
    /// The consent could not be completed (storage).
    #[oai(status = 500)]
    Failed(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// `action=external`: the identity provider cannot be reached (its discovery failed).
    #[oai(status = 502)]
    ProviderUnavailable(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// A client named by its metadata document's URL, while this server fetches as many
    /// documents as it does at once (16), or as many from that client's host (4). Hosted: an
    /// email and password while every place to check a password is taken (with `Retry-After`);
    /// `action=external` when the sign-in cannot be counted against its address's limit, and a
    /// pair code when its attempt cannot be counted against the pair-code budgets (the database
    /// did not answer; nothing is stored, no guess let through).
    #[oai(status = 503)]
    Busy(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
        /// Seconds until a password can be checked again: only on the hashing queue's answer.
        #[oai(header = "Retry-After")]
        Option<u64>,
    ),
}

/// `GET /oauth/oidc/callback`.
#[derive(ApiResponse)]
pub(super) enum ExternalCallbackAnswer {
    /// Signed in: to the MCP client's `redirect_uri?code&state&iss`; or, the person declined at
    /// the provider, with `error=access_denied`. The browser cookie is cleared.
    #[oai(status = 302)]
    Redirect(
        #[oai(header = "Location")] String,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Set-Cookie")] String,
    ),
    /// No `state` or `code`; a `state` unknown, used, expired or from another browser; the
    /// provider's code exchange or ID token failed a check; or the client's request no longer
    /// passes its checks (the page `GET /oauth/authorize` answers).
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// The identity has no account and none may be made for it (sign-up closed, or the email
    /// belongs to an account and the provider did not verify it).
    #[oai(status = 403)]
    Forbidden(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// OAuth is off or no provider is configured.
    #[oai(status = 404)]
    NotFound,
    /// The sign-in could not be completed (storage).
    #[oai(status = 500)]
    Failed(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// The identity provider cannot be reached.
    #[oai(status = 502)]
    ProviderUnavailable(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
    /// A client named by its metadata document's URL, while this server fetches as many
    /// documents as it does at once (16), or as many from that client's host (4).
    #[oai(status = 503)]
    Busy(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
        #[oai(header = "Content-Security-Policy")] String,
        #[oai(header = "Referrer-Policy")] String,
    ),
}

/// `POST /oauth/token`.
#[derive(ApiResponse)]
pub(super) enum TokenAnswerResponses {
    /// The access token.
    #[oai(status = 200)]
    Ok(
        Json<TokenAnswer>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `invalid_request`, `unsupported_grant_type`, `invalid_grant` or `invalid_target`.
    #[oai(status = 400)]
    Refused(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `invalid_client`: no such client.
    #[oai(status = 401)]
    UnknownClient(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// OAuth is off.
    #[oai(status = 404)]
    NotFound,
    /// `invalid_request`: the body is over 64 KiB (a declared length over it is refused unread,
    /// a chunked body as soon as it passes it).
    #[oai(status = 413)]
    TooLarge(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `invalid_request`: the body did not arrive in time (it paused for the idle timeout, or
    /// took longer than the body read timeout in all). A body of no declared length gets the
    /// server's body-limit answer instead, `{ error: { code: "REQUEST_TIMEOUT", message } }`.
    #[oai(status = 408)]
    TooSlow(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `server_error`: storage failed.
    #[oai(status = 500)]
    Failed(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// `temporarily_unavailable`: a client named by its metadata document's URL, while this
    /// server fetches as many documents as it does at once, or as many from that host; or the
    /// body was refused because the bodies arriving at once hold the server's budget for them
    /// (with `Retry-After`; a body of no declared length gets the server's
    /// `{ error: { code: "SERVER_BUSY", message } }`).
    #[oai(status = 503)]
    Busy(
        Json<OAuthError>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
        /// Seconds to wait: only on the answer to a body refused for the budget.
        #[oai(header = "Retry-After")]
        Option<u64>,
    ),
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use svc_application::services::oauth::{CLIENT_DOCUMENT_FETCHES_AT_ONCE, CLIENT_DOCUMENT_FETCHES_PER_HOST};

    fn served() -> Value {
        serde_json::from_str(crate::openapi::document()).expect("the served document is JSON")
    }

    fn answer<'a>(document: &'a Value, path: &str, method: &str, status: &str) -> &'a Value {
        &document["paths"][path][method]["responses"][status]
    }

    /// A doc comment cannot name a constant, so the busy answers write the fetch bounds as
    /// numbers: they must be the bounds the server holds.
    #[test]
    fn the_busy_answers_state_the_fetch_bounds_the_server_holds() {
        let document = served();
        let at_once = format!("at once ({CLIENT_DOCUMENT_FETCHES_AT_ONCE})");
        let per_host = format!("host ({CLIENT_DOCUMENT_FETCHES_PER_HOST})");
        for (path, method) in [
            ("/oauth/authorize", "get"),
            ("/oauth/authorize", "post"),
            ("/oauth/oidc/callback", "get"),
        ] {
            let description = answer(&document, path, method, "503")["description"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} documents a 503"));
            assert!(
                description.contains(&at_once) && description.contains(&per_host),
                "{method} {path}: {description}"
            );
        }
    }

    /// The consent answer's 503 is also the hashing queue's busy page, which says when to retry;
    /// the metadata documents' busy answer does not, so the header is listed as optional.
    #[test]
    fn the_consent_answers_busy_page_lists_an_optional_retry_after() {
        let document = served();
        let headers = answer(&document, "/oauth/authorize", "post", "503")["headers"]
            .as_object()
            .expect("the 503 lists headers");
        let (_, retry_after) = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("retry-after"))
            .unwrap_or_else(|| panic!("Retry-After in {:?}", headers.keys().collect::<Vec<_>>()));
        // OpenAPI's default for a header is optional; a required one says `"required": true`.
        assert_ne!(retry_after["required"], true, "{retry_after}");
        assert_eq!(retry_after["schema"]["type"], "integer", "{retry_after}");
    }
}
