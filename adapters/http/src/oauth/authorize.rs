//! `GET /oauth/authorize` shows the consent step for a fully checked request; `POST
//! /oauth/authorize` is the consent form's answer (exactly one of `pair_code` or `api_key`, or
//! `action=deny`).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{Body, Request, Response};
use svc_application::services::oauth::{
    ApproveError, AuthorizationRequest, AuthorizeError, ConsentCredential, ValidatedAuthorization,
};

use super::consent_page::{ConsentForm, error_page};
use super::params::{MAX_BODY_BYTES, Params};
use super::{OAuth, enabled, no_store, not_found};
use crate::route_states::RestRoutes;

/// HTTP 302 to `location` (Document 2 names 302 for both the code and the consent URL).
fn redirect(location: &str) -> Response {
    no_store(
        Response::builder()
            .status(StatusCode::FOUND)
            .header("location", location)
            .finish(),
    )
}

/// The answer to a request that failed its checks.
fn refused(oauth: &OAuth, error: AuthorizeError) -> Response {
    match error {
        AuthorizeError::NotRedirectable(message) => error_page(StatusCode::BAD_REQUEST, message),
        AuthorizeError::ClientDocument(refused) => error_page(StatusCode::BAD_REQUEST, &refused.to_string()),
        AuthorizeError::Redirect(redirect_to) => redirect(&redirect_to.location(oauth.service.issuer())),
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
        notice,
    }
    .render(status)
}

/// The external consent page, with every parameter of the request plus `mcp_origin`.
fn consent_url(oauth: &OAuth, consent_url: &str, params: &Params) -> Response {
    let Ok(mut url) = url::Url::parse(consent_url) else {
        tracing::error!(consent_url, "the configured consent URL does not parse");
        return error_page(StatusCode::INTERNAL_SERVER_ERROR, "The consent page is misconfigured.");
    };
    url.query_pairs_mut()
        .extend_pairs(params.pairs())
        .append_pair("mcp_origin", &oauth.service.issuer().origin());
    redirect(url.as_str())
}

pub(super) async fn show(req: &Request, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let params = Params::parse(req.uri().query().unwrap_or_default().as_bytes());
    if let Some(name) = params.duplicate() {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("The parameter {name} was sent more than once."),
        );
    }
    let request = params.authorization_request();
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
    let Ok(bytes) = body.into_bytes_limit(MAX_BODY_BYTES).await else {
        return error_page(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large.");
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
    let credential = match (params.filled("pair_code"), params.filled("api_key")) {
        (Some(code), None) => ConsentCredential::PairCode(code),
        (None, Some(key)) => ConsentCredential::ApiKey(key),
        (pair_code, _) => {
            let notice = if pair_code.is_some() {
                "Enter either the pair code or a key, not both."
            } else {
                "Enter the pair code or a key."
            };
            return reshow(oauth, state, &request, notice, StatusCode::BAD_REQUEST).await;
        }
    };
    // One budget of pair-code guesses per address, shared with `POST /_svc/pair`.
    if matches!(credential, ConsentCredential::PairCode(_))
        && let Some(pairing) = &state.pairing
        && let Some(limited) = pairing.check_attempt(req, "oauth-consent-pair-code").await
    {
        return limited;
    }
    match oauth.service.approve(&request, credential).await {
        Ok(location) => redirect(&location),
        Err(ApproveError::Authorize(error)) => refused(oauth, error),
        Err(ApproveError::CredentialRefused) => {
            let notice = "That pair code or key was not accepted.";
            reshow(oauth, state, &request, notice, StatusCode::UNAUTHORIZED).await
        }
        Err(ApproveError::PairingUnavailable) => {
            let notice = "This server prints no pair code (it runs in development mode): use a key.";
            reshow(oauth, state, &request, notice, StatusCode::BAD_REQUEST).await
        }
        Err(ApproveError::Internal(cause)) => {
            tracing::error!(error = ?cause, "consent failed");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server could not complete the request.",
            )
        }
    }
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
