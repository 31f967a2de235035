//! Sign-in with the external OpenID Connect provider at the consent step (hosted mode):
//! `POST /oauth/authorize` with `action=external` sends the browser to the provider, with a
//! cookie binding the sign-in to this browser; `GET /oauth/oidc/callback` is the provider's
//! return, which signs the person in and sends the browser on to the MCP client with its code.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{Request, Response};
use svc_application::ports::external_identity::ExternalSignInError;
use svc_application::services::accounts::AccountServiceError;
use svc_application::services::oauth::{ApproveError, AuthorizationRequest, EXTERNAL_SIGN_IN_LIFETIME};
use svc_application::services::rate_limit::address_key;

use super::authorize::{redirect, refused};
use super::consent_page::page;
use super::params::Params;
use super::rate_limit::Refusal;
use super::{OAuth, enabled, not_found};
use crate::client_address::client_ip;
use crate::oauth::escape;
use crate::route_states::RestRoutes;

/// The cookie that binds the provider's return to the browser that left for it.
const BROWSER_COOKIE: &str = "svc_oidc_browser";
/// The only path the cookie is sent to.
pub(crate) const CALLBACK_PATH: &str = "/oauth/oidc/callback";

fn sign_in_page(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>The sign-in did not complete</h1><p>{}</p>\
         <p>Nothing was sent to the application. Start the connection again from the application.</p>",
        escape(message)
    );
    page(status, "Sign-in not completed", &body)
}

fn cookie(oauth: &OAuth, value: &str, max_age: i64) -> String {
    let secure = if oauth.service.issuer().as_str().starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    format!("{BROWSER_COOKIE}={value}; Path={CALLBACK_PATH}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}")
}

fn browser_secret(req: &Request) -> Option<String> {
    req.headers()
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == BROWSER_COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// `action=external` on the consent form: to the provider.
pub(super) async fn begin(req: &Request, oauth: &OAuth, request: &AuthorizationRequest) -> Response {
    // This choice needs no secret from the person, so a form another site posts would take a
    // browser already signed in at the provider past the consent page to the attacker's
    // client: unlike the other answers, a request that names no page is refused too.
    if !oauth.consent_origins.posted_from(req) {
        return sign_in_page(
            StatusCode::FORBIDDEN,
            "The sign-in was not started from this server's consent page.",
        );
    }
    let ip = client_ip(req, oauth.options.trust_proxy);
    match oauth.external_sign_ins.check(ip).await {
        Ok(()) => {}
        Err(Refusal::Limited(answer)) => return answer,
        // The consent form's other busy answers are pages too (a metadata document fetch, the
        // password queue); a browser is on the other end.
        Err(Refusal::Uncounted) => {
            return sign_in_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "The sign-in could not be counted against this address's limit right now. Try again in a moment.",
            );
        }
    }
    let address = address_key(ip).to_string();
    match oauth.service.begin_external(request, Some(address)).await {
        Ok(started) => {
            let mut response = redirect(&started.provider_url);
            let value = cookie(oauth, &started.browser_secret, EXTERNAL_SIGN_IN_LIFETIME.num_seconds());
            response
                .headers_mut()
                .insert("set-cookie", value.parse().expect("base62 cookie"));
            response
        }
        Err(error) => failed(oauth, error),
    }
}

/// `GET /oauth/oidc/callback?state&code` (or `?state&error`): the provider's return.
pub(super) async fn callback(req: &Request, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    if oauth.service.external_provider_name().is_none() {
        return not_found();
    }
    let params = Params::parse(req.uri().query().unwrap_or_default().as_bytes());
    if let Some(name) = params.duplicate() {
        return sign_in_page(
            StatusCode::BAD_REQUEST,
            &format!("The parameter {name} was sent more than once."),
        );
    }
    let Some(provider_state) = params.filled("state") else {
        return sign_in_page(StatusCode::BAD_REQUEST, "The identity provider's answer has no state.");
    };
    let browser = browser_secret(req);
    let outcome = match (params.filled("error"), params.filled("code")) {
        (Some(error), _) => {
            tracing::info!(error, "the identity provider did not sign the person in");
            oauth
                .service
                .abandon_external(&provider_state, browser.as_deref())
                .await
        }
        (None, Some(code)) => {
            oauth
                .service
                .finish_external(&provider_state, &code, browser.as_deref())
                .await
        }
        (None, None) => {
            return sign_in_page(StatusCode::BAD_REQUEST, "The identity provider's answer has no code.");
        }
    };
    let mut response = match outcome {
        Ok(location) => redirect(&location),
        Err(error) => failed(oauth, error),
    };
    // The cookie has served its one sign-in.
    response
        .headers_mut()
        .insert("set-cookie", cookie(oauth, "", 0).parse().expect("static cookie"));
    response
}

fn failed(oauth: &OAuth, error: ApproveError) -> Response {
    match error {
        ApproveError::Authorize(error) => refused(oauth, error),
        ApproveError::Denied(denied) => redirect(&denied.location(oauth.service.issuer())),
        ApproveError::ExternalStateUnknown => sign_in_page(
            StatusCode::BAD_REQUEST,
            "This sign-in is unknown, was already used, has expired or was started in another browser.",
        ),
        ApproveError::External(ExternalSignInError::Unavailable(cause)) => {
            tracing::warn!(cause, "the identity provider is unavailable");
            sign_in_page(
                StatusCode::BAD_GATEWAY,
                "The identity provider cannot be reached right now. Try again in a moment.",
            )
        }
        ApproveError::External(rejected) => {
            tracing::warn!(error = %rejected, "the identity provider's answer was refused");
            sign_in_page(
                StatusCode::BAD_REQUEST,
                "The identity provider's answer did not pass the checks (a used or expired code, or a token that is not for this server).",
            )
        }
        ApproveError::SignIn(
            e @ (AccountServiceError::ExternalIdentityUnknown
            | AccountServiceError::ExternalEmailTaken
            | AccountServiceError::ExternalEmailMissing),
        ) => sign_in_page(StatusCode::FORBIDDEN, &capitalised(&e.to_string())),
        ApproveError::ExternalUnavailable => not_found(),
        other => {
            tracing::error!(error = ?other, "sign-in through the identity provider failed");
            sign_in_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server could not complete the request.",
            )
        }
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    let sentence: String = chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    format!("{sentence}.")
}
