//! `/console/session`: sign in (`POST`, the pair code or a key), the current session (`GET`, which
//! hands the page its CSRF token again after a reload) and sign out (`DELETE`).
//!
//! `POST { pairCode }`, `POST { key }` or (hosted) `POST { email, password }` answers 201
//! `{ csrfToken, expiresAt, principalId, appId, appLocked }` with the session cookie; a wrong code
//! is 401 `invalid_pair_code`, an unknown, revoked or expired key 401 `invalid_key`, a wrong email
//! or password 401 `invalid_credentials`; pair-code guesses share the 5-a-minute budget of
//! `/_svc/pair`, account attempts the budgets of the consent page's sign-in (429 `rate_limited`).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Json};
use poem::{IntoResponse, Request, Response, handler};
use serde::Deserialize;
use serde_json::json;
use subtle::ConstantTimeEq;
use svc_application::services::accounts::{AccountServiceError, SignIn as AccountSignIn};
use svc_application::services::console::{CONSOLE_SESSION_HOURS, ConsoleError, ConsoleSessions, ResumedSession};
use svc_application::services::pairing::PairingError;
use svc_application::services::rate_limit::address_key;

use super::{cookie, refusal};
use crate::client_address::client_ip;
use crate::route_states::ConsoleRoutes;
use crate::tools::iso;

/// The header every state-changing console request carries the session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The name the key minted by a pair-code sign-in carries in the key list.
const PAIRED_KEY_NAME: &str = "console";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignIn {
    pair_code: Option<String>,
    key: Option<String>,
    /// Hosted mode: an account's email, with its `password`.
    email: Option<String>,
    password: Option<String>,
}

/// Why a console request is not served; each answers its own status and code.
pub(super) enum Refusal {
    /// The server wires no console.
    NotWired,
    Session(ConsoleError),
    Csrf,
    NoPairCode,
    WrongPairCode,
    /// The pair-code budget's answer (429, or 503 when it cannot be counted).
    Limited(Box<Response>),
    PairingFailed,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Self::NotWired => StatusCode::NOT_FOUND.into_response(),
            Self::Session(error) => failure(error),
            Self::Csrf => refusal(
                StatusCode::FORBIDDEN,
                "csrf_token_invalid",
                "the request lacks the session's X-CSRF-Token header; reload the console",
            ),
            Self::NoPairCode => refusal(
                StatusCode::BAD_REQUEST,
                "pair_code_unavailable",
                "this server has no pair code (development mode): sign in with any key",
            ),
            Self::WrongPairCode => refusal(StatusCode::UNAUTHORIZED, "invalid_pair_code", "the pair code is wrong"),
            Self::Limited(response) => *response,
            Self::PairingFailed => refusal(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error"),
        }
    }
}

fn sessions(state: &ConsoleRoutes) -> Result<&ConsoleSessions, Refusal> {
    state.sessions.as_ref().ok_or(Refusal::NotWired)
}

fn secure(state: &ConsoleRoutes) -> bool {
    state.secure
}

#[handler]
pub async fn sign_in(req: &Request, Json(body): Json<SignIn>, Data(state): Data<&Arc<ConsoleRoutes>>) -> Response {
    let sessions = match sessions(state) {
        Ok(s) => s,
        Err(refused) => return refused.into_response(),
    };
    let opened = match (body.pair_code, body.key, body.email) {
        (Some(code), None, None) => match paired_key(req, state, &code).await {
            Ok(key) => sessions.sign_in_with_key(&key).await,
            Err(refused) => return refused.into_response(),
        },
        (None, Some(key), None) => sessions.sign_in_with_key(&key).await,
        (None, None, Some(email)) => {
            let attempt = AccountSignIn {
                email,
                // A password is taken as typed: spaces are characters of it.
                password: body.password.unwrap_or_default(),
                client_address: Some(address_key(client_ip(req, state.trust_proxy)).to_string()),
                sign_up: false,
            };
            sessions.sign_in_with_account(attempt).await
        }
        _ => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "send one of pairCode, key, or email with password",
            );
        }
    };
    let opened = match opened {
        Ok(opened) => opened,
        Err(ConsoleError::SignedOut) => {
            return refusal(
                StatusCode::UNAUTHORIZED,
                "invalid_key",
                "this key is unknown, revoked or expired",
            );
        }
        Err(other) => return sign_in_failure(req, state, other),
    };
    let resumed = match sessions.resume(&opened.cookie_secret).await {
        Ok(resumed) => resumed,
        Err(error) => return failure(error),
    };
    let cookie = cookie::set(&opened.cookie_secret, CONSOLE_SESSION_HOURS * 3600, secure(state));
    (StatusCode::CREATED, Json(session_body(&resumed)))
        .with_header("set-cookie", cookie)
        .with_header("cache-control", "no-store")
        .into_response()
}

/// Redeems the pair code for a fresh key named `console`; the session is tied to that key.
async fn paired_key(req: &Request, state: &ConsoleRoutes, code: &str) -> Result<String, Refusal> {
    let pairing = state.pairing.as_ref().ok_or(Refusal::NoPairCode)?;
    let attempt = pairing
        .check_attempt(req, "console")
        .await
        .map_err(|limited| Refusal::Limited(Box::new(limited)))?;
    match pairing.service.exchange(code, Some(PAIRED_KEY_NAME.to_owned())).await {
        Ok((_, token)) => {
            pairing.succeeded(attempt).await;
            Ok(token)
        }
        Err(PairingError::WrongCode) => Err(Refusal::WrongPairCode),
        Err(other) => {
            tracing::error!(error = ?other, "console pairing failed");
            Err(Refusal::PairingFailed)
        }
    }
}

#[handler]
pub async fn status(req: &Request, Data(state): Data<&Arc<ConsoleRoutes>>) -> Response {
    match live_session(req, state).await {
        Ok(resumed) => Json(session_body(&resumed))
            .with_header("cache-control", "no-store")
            .into_response(),
        Err(refused) => refused.into_response(),
    }
}

#[handler]
pub async fn sign_out(req: &Request, Data(state): Data<&Arc<ConsoleRoutes>>) -> Response {
    if let Err(refused) = session_for_change(req, state).await {
        return refused.into_response();
    }
    let (Ok(sessions), Some(secret)) = (sessions(state), cookie::read(req)) else {
        return StatusCode::NO_CONTENT.into_response();
    };
    if let Err(error) = sessions.close(&secret).await {
        return failure(error);
    }
    StatusCode::NO_CONTENT
        .with_header("set-cookie", cookie::clear(secure(state)))
        .into_response()
}

/// The live session of the request's cookie.
pub(super) async fn live_session(req: &Request, state: &ConsoleRoutes) -> Result<ResumedSession, Refusal> {
    let sessions = sessions(state)?;
    let secret = cookie::read(req).ok_or(Refusal::Session(ConsoleError::SignedOut))?;
    sessions.resume(&secret).await.map_err(Refusal::Session)
}

/// The live session of a state-changing request, which must send the session's CSRF token in
/// `X-CSRF-Token`: a page of another site can make the browser send the cookie, never the token.
pub(super) async fn session_for_change(req: &Request, state: &ConsoleRoutes) -> Result<ResumedSession, Refusal> {
    let resumed = live_session(req, state).await?;
    let sent = req.header(CSRF_HEADER).unwrap_or_default();
    if bool::from(sent.as_bytes().ct_eq(resumed.csrf_token.as_bytes())) {
        Ok(resumed)
    } else {
        Err(Refusal::Csrf)
    }
}

fn session_body(resumed: &ResumedSession) -> serde_json::Value {
    json!({
        "csrfToken": resumed.csrf_token,
        "expiresAt": iso(resumed.expires_at),
        "principalId": resumed.caller.caller.principal_id,
        "appId": resumed.caller.caller.app_id,
        "appLocked": resumed.caller.app_locked,
    })
}

/// A refused account sign-in: the same words for an unknown email and a wrong password; a spent
/// budget is the consent page's 429.
fn sign_in_failure(req: &Request, state: &ConsoleRoutes, error: ConsoleError) -> Response {
    match error {
        ConsoleError::Account(AccountServiceError::RateLimited { retry_after, quota }) => {
            let seconds = u64::try_from(retry_after.num_milliseconds())
                .unwrap_or(0)
                .div_ceil(1000)
                .max(1);
            let ip = client_ip(req, state.trust_proxy);
            crate::rate_limited::rate_limited(quota, ip, "too many sign-in attempts", seconds)
        }
        ConsoleError::Account(AccountServiceError::Busy(busy)) => crate::busy::busy_json(
            busy,
            "the server is checking as many passwords as it can at once; retry shortly",
        ),
        ConsoleError::Account(AccountServiceError::Refused) => refusal(
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
            "the email or password is not right",
        ),
        ConsoleError::Account(AccountServiceError::Rule(rule)) => {
            refusal(StatusCode::BAD_REQUEST, "invalid_request", &rule.to_string())
        }
        ConsoleError::AccountsUnavailable => refusal(
            StatusCode::BAD_REQUEST,
            "account_sign_in_unavailable",
            "this server has no accounts: sign in with the pair code or a key",
        ),
        other => failure(other),
    }
}

fn failure(error: ConsoleError) -> Response {
    match error {
        ConsoleError::SignedOut => refusal(
            StatusCode::UNAUTHORIZED,
            "signed_out",
            "sign in to the console: the session is missing, expired, signed out, or its key was revoked",
        ),
        ConsoleError::AppDeprovisioned(app) => refusal(
            StatusCode::FORBIDDEN,
            "app_deprovisioned",
            &format!("the app {app} this session's key is locked to was deleted"),
        ),
        ConsoleError::Internal(_) | ConsoleError::Account(_) | ConsoleError::AccountsUnavailable => {
            tracing::error!(error = ?error, "console session failed");
            refusal(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error")
        }
    }
}
