//! `POST /_svc/pair`: exchanges the boot pair code for a bearer key (strict mode only).
//!
//! Request `{ "pairCode": "123456", "clientName": "my laptop" }` (JSON). Answers:
//! - 201 `{ accessToken, tokenType: "Bearer", keyId }`;
//! - 422 `{ error: { code: "invalid_client_name", message } }` when a `clientName` sent breaks
//!   the key-name rule (1 to 120 characters once trimmed, so not empty or blank, no control
//!   characters), after the code (400 stays poem's plain-text answer to a body that is not the
//!   JSON object); one left out names the key "paired client";
//! - 401 `{ error: { code: "invalid_pair_code", message } }`;
//! - 429 with `Retry-After` and `{ error: { code: "rate_limited", message, retryAfter } }` after
//!   more than 5 attempts per minute from one address, or 30 per hour from all addresses
//!   together, counted with the OAuth consent form's pair-code attempts (one budget, whichever
//!   door);
//! - 413 `{ error: { code: "PAYLOAD_TOO_LARGE", message } }` for a body over 16 KiB;
//! - 503 `{ error: { code: "internal_error", message } }` when the attempt cannot be counted
//!   (no guess is let through without the database);
//! - 404 when the server runs in `--dev-allow-all` mode (nothing to pair).

use std::sync::Arc;

use chrono::TimeDelta;
use poem::http::StatusCode;
use poem::web::{Data, Json};
use poem::{IntoResponse, Request, Response};
use poem_openapi::{ApiResponse, Object, OpenApi};
use serde::Deserialize;
use serde_json::json;
use svc_application::ports::Clock;
use svc_application::ports::rate_windows::SharedWindows;
use svc_application::services::pairing::{PairingError, PairingService};
use svc_application::services::rate_limit::address_key;

use crate::client_address::client_ip;
use crate::openapi::{Described, RateLimited, RequestBody};
use crate::route_states::RestRoutes;

/// Attempts per minute per client address, on `/_svc/pair` and the consent form together.
pub const PAIR_ATTEMPTS_PER_MINUTE: u32 = 5;

/// Attempts per hour from all addresses together: six digits are a million codes, and
/// addresses are cheap (an IPv6 /48 holds 65,536 budgets of /64), so the per-address budget
/// alone would let a spread-out guesser through in minutes. At 30 an hour, half the codes take
/// about two years; an operator locked out meanwhile mints a key with `svc keys mint`.
pub const PAIR_ATTEMPTS_PER_HOUR_IN_ALL: u32 = 30;

/// The quotas' names in the shared windows.
const PAIR_ATTEMPTS_QUOTA: &str = "pair-code";
const PAIR_ATTEMPTS_IN_ALL_QUOTA: &str = "pair-code-all";
/// The one key of the budget of all addresses.
const ALL_ADDRESSES: &str = "all";

/// An attempt counted (when it was, so a right code can be uncounted from the same window).
pub(crate) struct PairAttempt {
    at: chrono::DateTime<chrono::Utc>,
}

/// Why a pair-code attempt was not let through.
pub(crate) enum AttemptRefused {
    /// A budget is spent: the 429 every limit answers.
    Limited(Response),
    /// The database could not count the attempt, so no guess goes through; each door answers
    /// this in its own form (JSON here and at the console, a page on the consent form).
    Uncounted,
}

impl AttemptRefused {
    /// The JSON answer: the 429, or 503 `internal_error`.
    pub(crate) fn into_json(self) -> Response {
        match self {
            Self::Limited(answer) => answer,
            Self::Uncounted => error(
                StatusCode::SERVICE_UNAVAILABLE,
                "internal_error",
                "the attempt could not be counted; try again",
            ),
        }
    }
}

pub struct Pairing {
    pub service: PairingService,
    /// The one budget of pair-code guesses per address (an IPv6 client by its /64), a fixed
    /// minute counted in the database: every replica on it shares the budget.
    attempts: Arc<dyn SharedWindows>,
    clock: Arc<dyn Clock>,
    /// Count the last `X-Forwarded-For` entry instead of the peer (`oauth.trust_proxy`): both
    /// doors of the one budget read the address the same way.
    trust_proxy: bool,
}

impl Pairing {
    pub fn new(
        service: PairingService,
        attempts: Arc<dyn SharedWindows>,
        clock: Arc<dyn Clock>,
        trust_proxy: bool,
    ) -> Self {
        Self {
            service,
            attempts,
            clock,
            trust_proxy,
        }
    }

    /// [`Pairing::count_attempt`], refused in JSON ([`AttemptRefused::into_json`]).
    pub(crate) async fn check_attempt(&self, req: &Request, door: &str) -> Result<PairAttempt, Response> {
        self.count_attempt(req, door).await.map_err(AttemptRefused::into_json)
    }

    /// The attempt's code was right: it leaves the budget of all addresses, which bounds guessing,
    /// not use (pairing a few clients, or a console sign-in, spends none of it).
    pub(crate) async fn succeeded(&self, attempt: PairAttempt) {
        let given_back = self
            .attempts
            .give_back(
                PAIR_ATTEMPTS_IN_ALL_QUOTA,
                ALL_ADDRESSES,
                TimeDelta::hours(1),
                attempt.at,
            )
            .await;
        if let Err(cause) = given_back {
            tracing::warn!(error = ?cause, "a right pair code could not be uncounted");
        }
    }

    /// Counts one pair-code attempt from the request's client (`door` names it in the log);
    /// refused when the address's budget or the budget of all addresses is spent. Without the
    /// database to count in, no guess is let through.
    pub(crate) async fn count_attempt(&self, req: &Request, door: &str) -> Result<PairAttempt, AttemptRefused> {
        let ip = client_ip(req, self.trust_proxy);
        let key = address_key(ip).to_string();
        let now = self.clock.now();
        let per_address = self
            .attempts
            .admit(
                PAIR_ATTEMPTS_QUOTA,
                &key,
                PAIR_ATTEMPTS_PER_MINUTE,
                TimeDelta::minutes(1),
                now,
            )
            .await;
        let counted = match per_address {
            Ok(None) => {
                self.attempts
                    .admit(
                        PAIR_ATTEMPTS_IN_ALL_QUOTA,
                        ALL_ADDRESSES,
                        PAIR_ATTEMPTS_PER_HOUR_IN_ALL,
                        TimeDelta::hours(1),
                        now,
                    )
                    .await
            }
            refused => refused,
        };
        match counted {
            Ok(None) => Ok(PairAttempt { at: now }),
            Ok(Some(wait)) => {
                let retry_after = u64::try_from(wait.num_milliseconds())
                    .unwrap_or(0)
                    .div_ceil(1000)
                    .max(1);
                Err(AttemptRefused::Limited(crate::rate_limited::rate_limited(
                    door,
                    ip,
                    "too many pair code attempts",
                    retry_after,
                )))
            }
            Err(cause) => {
                tracing::error!(error = ?cause, "could not count a pair-code attempt");
                Err(AttemptRefused::Uncounted)
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairRequest {
    pair_code: String,
    client_name: Option<String>,
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

async fn pair(req: &Request, body: Json<PairRequest>, state: &Arc<RestRoutes>) -> Response {
    let Some(pairing) = &state.pairing else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let attempt = match pairing.check_attempt(req, "pairing").await {
        Ok(attempt) => attempt,
        Err(limited) => return limited,
    };
    match pairing
        .service
        .exchange(&body.pair_code, body.client_name.clone())
        .await
    {
        Ok((key_id, token)) => {
            pairing.succeeded(attempt).await;
            // A bearer key: kept by no cache on the way.
            (
                StatusCode::CREATED,
                Json(json!({ "accessToken": token, "tokenType": "Bearer", "keyId": key_id })),
            )
                .with_header("cache-control", "no-store")
                .into_response()
        }
        Err(PairingError::WrongCode) => error(StatusCode::UNAUTHORIZED, "invalid_pair_code", "the pair code is wrong"),
        Err(e @ PairingError::InvalidClientName(_)) => {
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_client_name", &e.to_string())
        }
        Err(PairingError::Internal(cause)) => {
            tracing::error!(error = ?cause, "pairing failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error")
        }
    }
}

/// `POST /_svc/pair` as a poem-openapi operation: routed and documented in `/openapi.json`; the
/// body is taken by poem's `Json` extractor exactly as before (see `crate::openapi`).
pub(crate) struct PairingApi;

#[OpenApi]
impl PairingApi {
    /// Exchanges the boot pair code for a bearer key
    ///
    /// Strict mode only (404 with `--dev-allow-all`); at most 5 attempts a minute per address
    /// and 30 an hour from all addresses together.
    #[oai(path = "/_svc/pair", method = "post")]
    async fn pair(
        &self,
        req: &Request,
        body: RequestBody<Json<PairRequest>, poem_openapi::payload::Json<PairBody>>,
        state: Data<&Arc<RestRoutes>>,
    ) -> Described<PairAnswer> {
        Described::new(pair(req, body.0, &state).await)
    }
}

/// The request, for the document (parsed by [`PairRequest`]).
#[derive(Object)]
#[oai(rename_all = "camelCase")]
#[allow(dead_code)]
struct PairBody {
    /// The 6 digits printed on the server's banner.
    pair_code: String,
    /// Names the minted key in the key list: 1 to 120 characters once trimmed, no control
    /// characters. Left out, the key is named "paired client".
    client_name: Option<String>,
}

#[derive(Object)]
#[oai(rename_all = "camelCase")]
#[allow(dead_code)]
struct Paired {
    /// `svc_user_...`: the bearer for `/mcp` and `/ops`.
    access_token: String,
    /// `"Bearer"`
    token_type: String,
    key_id: String,
}

#[derive(Object)]
#[allow(dead_code)]
struct PairError {
    error: PairErrorDetail,
}

#[derive(Object)]
#[allow(dead_code)]
struct PairErrorDetail {
    /// `invalid_pair_code`, `invalid_client_name`, `PAYLOAD_TOO_LARGE` or `internal_error`.
    code: String,
    message: String,
}

/// Answers of `POST /_svc/pair`; described, never built (the handler writes them).
#[derive(ApiResponse)]
#[allow(dead_code)]
enum PairAnswer {
    /// A new connector key.
    #[oai(status = 201)]
    Paired(poem_openapi::payload::Json<Paired>),
    /// The body is not the JSON object above (poem's JSON extractor's plain-text reason).
    #[oai(status = 400)]
    Malformed(poem_openapi::payload::PlainText<String>),
    /// The pair code is wrong.
    #[oai(status = 401)]
    WrongCode(poem_openapi::payload::Json<PairError>),
    /// The server runs with `--dev-allow-all`: nothing to pair.
    #[oai(status = 404)]
    NotFound,
    /// The body is over 16 KiB (`PAYLOAD_TOO_LARGE`).
    #[oai(status = 413)]
    TooLarge(poem_openapi::payload::Json<PairError>),
    /// The `Content-Type` is not `application/json` (poem's JSON extractor, as for 400).
    #[oai(status = 415)]
    UnsupportedMediaType(poem_openapi::payload::PlainText<String>),
    /// `invalid_client_name`: the right code, but `clientName` is not 1 to 120 characters once
    /// trimmed (empty or blank included) or holds a control character; the message names the
    /// field and the rule.
    #[oai(status = 422)]
    InvalidClientName(poem_openapi::payload::Json<PairError>),
    /// More than 5 attempts a minute from one address.
    #[oai(status = 429)]
    RateLimited(
        poem_openapi::payload::Json<RateLimited>,
        #[oai(header = "Retry-After")] u64,
    ),
    /// `internal_error`.
    #[oai(status = 500)]
    Failed(poem_openapi::payload::Json<PairError>),
    /// `internal_error`: the attempt could not be counted against the budgets (the database did
    /// not answer); no guess is let through, try again.
    #[oai(status = 503)]
    Uncounted(poem_openapi::payload::Json<PairError>),
}
