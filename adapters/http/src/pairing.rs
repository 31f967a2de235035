//! `POST /_svc/pair`: exchanges the boot pair code for a bearer key (strict mode only).
//!
//! Request `{ "pairCode": "123456", "clientName": "my laptop" }` (JSON). Answers:
//! - 201 `{ accessToken, tokenType: "Bearer", keyId }`;
//! - 401 `{ error: { code: "invalid_pair_code", message } }`;
//! - 429 with `Retry-After` and `{ error: { code: "rate_limited", message, retryAfter } }` after
//!   more than 5 attempts per minute from one address;
//! - 404 when the server runs in `--dev-allow-all` mode (nothing to pair).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use poem::http::StatusCode;
use poem::web::{Data, Json};
use poem::{IntoResponse, Request, Response, handler};
use serde::Deserialize;
use serde_json::json;
use svc_application::services::pairing::{PairingError, PairingService};

use crate::HttpState;

/// Attempts per minute per client address.
pub const PAIR_ATTEMPTS_PER_MINUTE: u32 = 5;

pub struct Pairing {
    pub service: PairingService,
    limiter: DefaultKeyedRateLimiter<IpAddr>,
}

impl Pairing {
    pub fn new(service: PairingService) -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(PAIR_ATTEMPTS_PER_MINUTE).expect("non-zero"));
        Self {
            service,
            limiter: RateLimiter::keyed(quota),
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

#[handler]
pub async fn pair(req: &Request, body: Json<PairRequest>, Data(state): Data<&Arc<HttpState>>) -> Response {
    let Some(pairing) = &state.pairing else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let ip = req
        .remote_addr()
        .as_socket_addr()
        .map(|a| a.ip())
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    if let Err(not_until) = pairing.limiter.check_key(&ip) {
        let wait = not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()));
        let retry_after = wait.as_secs().max(1);
        tracing::warn!(quota_key = "pairing", %ip, "rate_limit_hit");
        let mut response = (
            StatusCode::TOO_MANY_REQUESTS,
            Json(json!({ "error": { "code": "rate_limited", "message": "too many pairing attempts", "retryAfter": retry_after } })),
        )
            .into_response();
        response.headers_mut().insert("retry-after", retry_after.into());
        return response;
    }
    match pairing
        .service
        .exchange(&body.pair_code, body.client_name.clone())
        .await
    {
        Ok((key_id, token)) => (
            StatusCode::CREATED,
            Json(json!({ "accessToken": token, "tokenType": "Bearer", "keyId": key_id })),
        )
            .into_response(),
        Err(PairingError::WrongCode) => error(StatusCode::UNAUTHORIZED, "invalid_pair_code", "the pair code is wrong"),
        Err(PairingError::Internal(cause)) => {
            tracing::error!(error = ?cause, "pairing failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error")
        }
    }
}
