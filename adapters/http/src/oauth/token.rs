//! `POST /oauth/token` (form-encoded): `{ access_token, token_type: "Bearer", scope: "mcp" }`,
//! no refresh token and no `expires_in`; errors as RFC 6749 section 5.2 JSON (a body not read
//! whole too: `unread_body`). Never cached.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Json;
use poem::{Body, IntoResponse, Response};
use serde_json::json;
use svc_application::services::oauth::TokenError;

use super::params::{MAX_BODY_BYTES, Params};
use super::unread_body::unread_body_answer;
use super::{enabled, no_store, not_found};
use crate::route_states::RestRoutes;

fn error(status: StatusCode, code: &str, description: &str) -> Response {
    no_store((status, Json(json!({ "error": code, "error_description": description }))).into_response())
}

pub(super) async fn token(body: Body, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let bytes = match crate::body_limit::read_limited(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(unread) => return unread_body_answer(unread, "invalid_request"),
    };
    let params = Params::parse(&bytes);
    if let Some(name) = params.duplicate() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("{name} was sent more than once"),
        );
    }
    if let Some(name) = params.with_nul() {
        let name = svc_domain::text::excerpt(name);
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("{name} {}", svc_domain::text::NUL_RULE),
        );
    }
    match oauth.service.exchange(&params.token_request()).await {
        Ok(token) => no_store(
            Json(json!({ "access_token": token.expose(), "token_type": "Bearer", "scope": "mcp" })).into_response(),
        ),
        Err(TokenError::Storage(cause)) => {
            tracing::error!(error = ?cause, "token exchange failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "internal error")
        }
        Err(TokenError::ClientDocument(busy)) if busy.is_busy() => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            &busy.to_string(),
        ),
        Err(refused) => {
            let status = match refused {
                TokenError::UnknownClient | TokenError::ClientDocument(_) => StatusCode::UNAUTHORIZED,
                _ => StatusCode::BAD_REQUEST,
            };
            error(status, refused.code(), &refused.to_string())
        }
    }
}
