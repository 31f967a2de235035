//! `POST /_svc/invites/{inviteId}/accept`: the invitee accepts an org invite.
//!
//! Authenticated by the invitee's own bearer, with the same check as `/mcp` and `/ops`. On a
//! self-hosted server holding the invite id (the email carries it) is what entitles the caller;
//! on a hosted server the caller must also show the mailed link's token (an optional JSON body
//! `{ "token": "..." }`) or be the invitee (their account's address is the invited one), else
//! the invite answers as missing (404). The caller's identity becomes a member with the invited
//! role. Answers:
//! - 200 `{ orgId, userId, role, joinedAt }` (a caller already in the org keeps their membership);
//! - 401 `{ error: { code: "unauthorized", message } }` without a valid bearer;
//! - 403 `app_access_denied` for a key locked to an app (membership is beyond one app);
//! - 404 `org_invite_not_found`, 410 `org_invite_revoked` / `org_invite_expired`,
//!   409 `org_invite_already_accepted` (also what a revoke racing an accept meets);
//! - 400 `invalid_request` for a body that is not `{ "token"?: string }`;
//! - 404 with no body when the orgs domain is not wired.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Json, Path};
use poem::{Body, IntoResponse, Request, Response, handler};
use serde::Deserialize;
use serde_json::json;
use svc_application::services::auth::AuthError;
use svc_application::services::operator::{AcceptInvite, OrgServiceError};

use super::OpsCaller;
use super::wire::record;
use crate::mcp::bearer;
use crate::route_states::OpsRoutes;

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

fn internal() -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error")
}

fn refused(e: OrgServiceError) -> Response {
    match crate::errors::accept_invite_status(&e) {
        Some(status) => error(status, e.code(), &e.to_string()),
        None => {
            tracing::error!(error = ?e, "accepting an invite failed");
            internal()
        }
    }
}

/// The optional body: the token of the invite mail's link.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AcceptBody {
    token: Option<String>,
}

#[handler]
pub async fn accept_invite(
    req: &Request,
    Path(invite_id): Path<String>,
    body: Body,
    Data(state): Data<&Arc<OpsRoutes>>,
) -> Response {
    let Some(orgs) = &state.ops.orgs else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Ok(bytes) = body.into_bytes().await else {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "the body could not be read");
    };
    let accept_body: AcceptBody = if bytes.iter().all(u8::is_ascii_whitespace) {
        AcceptBody::default()
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(parsed) => parsed,
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "the body must be empty or { \"token\": \"...\" }",
                );
            }
        }
    };
    let authenticated = match state.gate.auth.authenticate_scoped(bearer(req).as_deref()).await {
        Ok(a) => a,
        Err(AuthError::Internal(cause)) => {
            tracing::error!(error = ?cause, "authentication failed");
            return internal();
        }
        Err(e @ AuthError::AppDeprovisioned(_)) => {
            return error(StatusCode::FORBIDDEN, "app_deprovisioned", &e.to_string());
        }
        Err(e) => {
            let mut response = error(StatusCode::UNAUTHORIZED, "unauthorized", &e.to_string());
            response.headers_mut().insert(
                "www-authenticate",
                r#"Bearer realm="mcp""#.parse().expect("static header"),
            );
            return response;
        }
    };
    let Ok(caller) = OpsCaller::new(&authenticated) else {
        return internal();
    };
    // Membership is the owner's, beyond any one app: a key locked to an app cannot take it on.
    if caller.app_locked {
        return error(
            StatusCode::FORBIDDEN,
            "app_access_denied",
            "a key locked to an app cannot accept org invites; use a key of the user",
        );
    }
    let command = AcceptInvite {
        user_id: caller.identity,
        invite_id,
    };
    match orgs
        .accept_invite_as_caller(command, accept_body.token.as_deref())
        .await
    {
        Ok(membership) => match record(&membership) {
            Ok(body) => Json(body).into_response(),
            Err(_) => internal(),
        },
        Err(e) => refused(e),
    }
}
