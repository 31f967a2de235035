//! `GET /oauth/authorize` shows the consent step for a fully checked request; `POST
//! /oauth/authorize` is the consent form's answer (exactly one of `pair_code`, `api_key` or, in
//! hosted mode, `email` with `password`; or `action=deny`).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{Body, Request, Response};
use svc_application::services::accounts::{AccountServiceError, SignIn};
use svc_application::services::oauth::{
    ApproveError, AuthorizationRequest, AuthorizeError, ConsentCredential, ValidatedAuthorization,
};
use svc_application::services::rate_limit::address_key;

use super::consent_origin;
use super::consent_page::{ConsentForm, error_page};
use super::params::{MAX_BODY_BYTES, Params};
use super::rejected_page::rejected_page;
use super::{OAuth, enabled, no_store, not_found};
use crate::body_limit::Unread;
use crate::client_address::client_ip;
use crate::pairing::AttemptRefused;
use crate::route_states::RestRoutes;

/// HTTP 302 to `location` (Document 2 names 302 for both the code and the consent URL).
pub(super) fn redirect(location: &str) -> Response {
    no_store(
        Response::builder()
            .status(StatusCode::FOUND)
            .header("location", location)
            .finish(),
    )
}

/// The answer to a request that failed its checks: a page, never a redirect (the client's
/// redirect URI is offered as a link once it is verified).
pub(super) fn refused(oauth: &OAuth, error: AuthorizeError) -> Response {
    match error {
        AuthorizeError::NotRedirectable(message) => error_page(StatusCode::BAD_REQUEST, message),
        AuthorizeError::ClientDocument(refused) if refused.is_busy() => {
            error_page(StatusCode::SERVICE_UNAVAILABLE, &refused.to_string())
        }
        AuthorizeError::ClientDocument(refused) => error_page(StatusCode::BAD_REQUEST, &refused.to_string()),
        AuthorizeError::Rejected(rejected) => rejected_page(oauth.service.issuer(), &rejected),
        AuthorizeError::Storage(cause) => {
            tracing::error!(error = ?cause, "authorization request failed");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server could not check the request.",
            )
        }
    }
}

fn form(
    oauth: &OAuth,
    state: &RestRoutes,
    validated: &ValidatedAuthorization,
    request: &AuthorizationRequest,
    notice: Option<&str>,
    status: StatusCode,
) -> Response {
    ConsentForm {
        issuer: oauth.service.issuer(),
        validated,
        request,
        pairing: state.pairing.is_some(),
        accounts: oauth.service.signup_mode(),
        external: oauth.service.external_provider_name(),
        notice,
    }
    .render(status)
}

/// The external consent page, with every parameter of the request plus `mcp_origin`. An
/// `mcp_origin` in the request is not passed on: the page posts the credential back to it, so
/// it comes from the server alone (a page reading the first of two would post to the sender's).
fn consent_url(oauth: &OAuth, consent_url: &str, params: &Params) -> Response {
    const MCP_ORIGIN: &str = "mcp_origin";
    let Ok(mut url) = url::Url::parse(consent_url) else {
        tracing::error!(consent_url, "the configured consent URL does not parse");
        return error_page(StatusCode::INTERNAL_SERVER_ERROR, "The consent page is misconfigured.");
    };
    url.query_pairs_mut()
        .extend_pairs(params.pairs().iter().filter(|(name, _)| name != MCP_ORIGIN))
        .append_pair(MCP_ORIGIN, &oauth.service.issuer().origin());
    redirect(url.as_str())
}

pub(super) async fn show(req: &Request, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    const RESOURCE: &str = "resource";
    let params = Params::parse(req.uri().query().unwrap_or_default().as_bytes());
    if let Some(name) = params.duplicate_besides(RESOURCE) {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("The parameter {name} was sent more than once."),
        );
    }
    let request = params.authorization_request();
    // RFC 8707 allows several resources; the client hears why it got none (`invalid_target`).
    if params.repeats(RESOURCE) {
        return refused(oauth, oauth.service.refuse_several_resources(&request).await);
    }
    match oauth.service.validate_authorization(&request).await {
        Ok(validated) => match &oauth.options.consent_url {
            Some(url) => consent_url(oauth, url, &params),
            None => form(oauth, state, &validated, &request, None, StatusCode::OK),
        },
        Err(error) => refused(oauth, error),
    }
}

pub(super) async fn answer(req: &Request, body: Body, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    if let Some(origin) = oauth.consent_origins.foreign(req) {
        return consent_origin::refused_from(&origin);
    }
    let bytes = match crate::body_limit::read_limited(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(Unread::TooLarge) => return error_page(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large."),
        Err(unread) => return error_page(unread.status(), "The form did not arrive whole."),
    };
    let params = Params::parse(&bytes);
    if let Some(name) = params.duplicate() {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("The field {name} was sent more than once."),
        );
    }
    if let Some(name) = params.with_nul() {
        let name = svc_domain::text::excerpt(name);
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("The field {name} {}.", svc_domain::text::NUL_RULE),
        );
    }
    let request = params.authorization_request();
    if params.get("action").as_deref() == Some("deny") {
        return match oauth.service.deny(&request).await {
            Ok(location) => redirect(&location),
            Err(error) => refused(oauth, error),
        };
    }
    if params.get("action").as_deref() == Some("external") {
        return super::external_sign_in::begin(req, oauth, &request).await;
    }
    let accounts = oauth.service.signup_mode().is_some();
    let email = params.filled("email").filter(|_| accounts);
    let credential = match (params.filled("pair_code"), params.filled("api_key"), email) {
        (Some(code), None, None) => ConsentCredential::PairCode(code),
        (None, Some(key), None) => ConsentCredential::ApiKey(key),
        (None, None, Some(email)) => ConsentCredential::Account(SignIn {
            email,
            // A password is taken as typed: spaces are characters of it.
            password: params.get("password").unwrap_or_default(),
            client_address: Some(address_key(client_ip(req, oauth.options.trust_proxy)).to_string()),
            sign_up: params.get("action").as_deref() == Some("signup"),
        }),
        (None, None, None) => {
            let notice = if accounts {
                "Enter your email and password, or a key."
            } else {
                "Enter the pair code or a key."
            };
            return reshow(oauth, state, &request, notice, StatusCode::BAD_REQUEST).await;
        }
        _ => {
            let notice = if accounts {
                "Sign in with one credential: your email and password, a key or the pair code."
            } else {
                "Enter either the pair code or a key, not both."
            };
            return reshow(oauth, state, &request, notice, StatusCode::BAD_REQUEST).await;
        }
    };
    // One budget of pair-code guesses per address, shared with `POST /_svc/pair`.
    let pair_attempt = match (&credential, &state.pairing) {
        (ConsentCredential::PairCode(_), Some(pairing)) => {
            match pairing.count_attempt(req, "oauth-consent-pair-code").await {
                Ok(attempt) => Some((pairing, attempt)),
                Err(AttemptRefused::Limited(limited)) => return limited,
                // A page, as the form's other busy answers: a browser is on the other end.
                Err(AttemptRefused::Uncounted) => {
                    return error_page(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The pair code could not be counted against this address's limit right now. \
                         Try again in a moment.",
                    );
                }
            }
        }
        _ => None,
    };
    match oauth.service.approve(&request, credential).await {
        Ok(location) => {
            if let Some((pairing, attempt)) = pair_attempt {
                pairing.succeeded(attempt).await;
            }
            redirect(&location)
        }
        Err(ApproveError::Authorize(error)) => refused(oauth, error),
        Err(ApproveError::Denied(denied)) => redirect(&denied.location(oauth.service.issuer())),
        Err(ApproveError::CredentialRefused) => {
            let notice = "That pair code or key was not accepted.";
            reshow(oauth, state, &request, notice, StatusCode::UNAUTHORIZED).await
        }
        Err(ApproveError::SignIn(error)) => signed_out(req, oauth, state, &request, error).await,
        Err(ApproveError::PairingUnavailable) => {
            let notice = "This server prints no pair code (it runs in development mode): use a key.";
            reshow(oauth, state, &request, notice, StatusCode::BAD_REQUEST).await
        }
        Err(
            error @ (ApproveError::ExternalUnavailable
            | ApproveError::ExternalStateUnknown
            | ApproveError::External(_)
            | ApproveError::Internal(_)),
        ) => {
            tracing::error!(error = ?error, "consent failed");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server could not complete the request.",
            )
        }
    }
}

/// A refused sign-in: the form again with what to do, or a spent sign-in budget's 429. The
/// notice for a wrong password and for an unknown email is the same.
async fn signed_out(
    req: &Request,
    oauth: &OAuth,
    state: &RestRoutes,
    request: &AuthorizationRequest,
    error: AccountServiceError,
) -> Response {
    let (notice, status) = match &error {
        AccountServiceError::RateLimited { retry_after, quota } => {
            let seconds = u64::try_from(retry_after.num_milliseconds())
                .unwrap_or(0)
                .div_ceil(1000)
                .max(1);
            let ip = client_ip(req, oauth.options.trust_proxy);
            return crate::rate_limited::rate_limited(quota, ip, "too many sign-in attempts", seconds);
        }
        AccountServiceError::Busy(busy) => return crate::busy::busy_page(*busy),
        AccountServiceError::Refused => (
            "The email or password is not right.".to_owned(),
            StatusCode::UNAUTHORIZED,
        ),
        AccountServiceError::SignupClosed => (error.to_string(), StatusCode::FORBIDDEN),
        AccountServiceError::Rule(rule) => (format!("{}.", capitalised(&rule.to_string())), StatusCode::BAD_REQUEST),
        AccountServiceError::EmailTaken
        | AccountServiceError::LinkInvalid
        | AccountServiceError::ExternalIdentityUnknown
        | AccountServiceError::ExternalEmailMissing
        | AccountServiceError::ExternalEmailTaken
        | AccountServiceError::Storage(_) => {
            tracing::error!(error = ?error, "sign-in failed");
            return error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server could not complete the request.",
            );
        }
    };
    reshow(oauth, state, request, &notice, status).await
}

pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The form again, with a notice, for a request that still passes its checks.
async fn reshow(
    oauth: &OAuth,
    state: &RestRoutes,
    request: &AuthorizationRequest,
    notice: &str,
    status: StatusCode,
) -> Response {
    match oauth.service.validate_authorization(request).await {
        Ok(validated) => form(oauth, state, &validated, request, Some(notice), status),
        Err(error) => refused(oauth, error),
    }
}
