//! `POST /oauth/register` (RFC 7591). 201 with the client's metadata and no secret; 400
//! `invalid_redirect_uri` or `invalid_client_metadata`; a body not read whole as `unread_body`
//! answers it (413 `invalid_request` over 64 KiB); 429 past 10 registrations per 10 minutes from one address (503
//! `temporarily_unavailable` when they cannot be counted).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Json;
use poem::{Body, IntoResponse, Request, Response};
use serde_json::{Value, json};
use svc_application::services::oauth::{RegisterClient, RegisterError};
use svc_domain::oauth::{ClientName, RedirectUri};

use super::params::MAX_BODY_BYTES;
use super::rate_limit;
use super::unread_body::unread_body_answer;
use super::{enabled, no_store, not_found};
use crate::client_address::client_ip;
use crate::route_states::RestRoutes;

fn refused(code: &str, description: &str) -> Response {
    answer(StatusCode::BAD_REQUEST, code, description)
}

fn answer(status: StatusCode, code: &str, description: &str) -> Response {
    no_store((status, Json(json!({ "error": code, "error_description": description }))).into_response())
}

/// An RFC 7591 error code and its description.
type Refusal = (&'static str, &'static str);

/// Reads the two fields the rules look at; a wrong JSON type is refused with the error of its field.
fn parse(body: &[u8]) -> Result<RegisterClient, Refusal> {
    // A stranger's text: serde_json's raw-value marker is refused before a `Value` parse.
    let metadata: Value = svc_domain::json_marker::refuse_raw_value_marker(body)
        .and_then(|()| serde_json::from_slice(body))
        .ok()
        .filter(Value::is_object)
        .ok_or(("invalid_client_metadata", "the body must be a JSON object"))?;
    let bad_uris = || ("invalid_redirect_uri", "redirect_uris must be an array of strings");
    let redirect_uris = metadata["redirect_uris"]
        .as_array()
        .ok_or_else(bad_uris)?
        .iter()
        .map(|uri| uri.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad_uris)?;
    let client_name = match &metadata["client_name"] {
        Value::Null => None,
        Value::String(name) => Some(name.clone()),
        _ => return Err(("invalid_client_metadata", "client_name must be a string")),
    };
    Ok(RegisterClient {
        redirect_uris,
        client_name,
    })
}

pub(super) async fn register(req: &Request, body: Body, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    match oauth
        .registrations
        .check(client_ip(req, oauth.options.trust_proxy))
        .await
    {
        Ok(()) => {}
        Err(rate_limit::Refusal::Limited(answer)) => return answer,
        Err(rate_limit::Refusal::Uncounted) => {
            return answer(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "the request could not be counted; try again",
            );
        }
    }
    let bytes = match crate::body_limit::read_limited(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(unread) => return unread_body_answer(unread, "invalid_client_metadata"),
    };
    let command = match parse(&bytes) {
        Ok(command) => command,
        Err((code, description)) => return refused(code, description),
    };
    match oauth.service.register(command).await {
        Ok(client) => {
            let mut answer = json!({
                "client_id": client.client_id,
                "client_id_issued_at": client.created_at.timestamp(),
                "redirect_uris": client.redirect_uris.iter().map(RedirectUri::as_str).collect::<Vec<_>>(),
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            });
            if let Some(name) = client.client_name.as_ref().map(ClientName::as_str) {
                answer["client_name"] = json!(name);
            }
            no_store((StatusCode::CREATED, Json(answer)).into_response())
        }
        Err(RegisterError::Rejected(rule)) => refused(rule.code(), &rule.to_string()),
        Err(RegisterError::Storage(error)) => {
            tracing::error!(error = ?error, "client registration failed");
            no_store(
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(json!({ "error": "server_error", "error_description": "internal error" })),
                )
                    .into_response(),
            )
        }
    }
}
