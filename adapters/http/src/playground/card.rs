//! `GET /_svc/playground/card/<sessionId>?token=<wsToken>`: the render's `ui://svc/render/<id>`
//! document for the playground's sandboxed frame, under the policy built from the document's own
//! declared `_meta.ui.csp` as an HTTP header. A frame navigated here has its own policy; a srcdoc
//! frame would inherit the page's (which forbids inline script). The token is the credential, as
//! on the polling fallback: a wsToken or session token for this session.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Json, Path, Query};
use poem::{IntoResponse, Response, handler};
use serde::Deserialize;
use serde_json::json;
use svc_protocol::INTERNAL_ERROR;

use super::policy;
use crate::live::polling::authenticated;
use crate::mcp::jsonrpc::RpcFailure;
use crate::mcp::resources;
use crate::route_states::PlaygroundRoutes;

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: String,
}

#[handler]
pub async fn serve(
    Path(session_id): Path<String>,
    Query(query): Query<TokenQuery>,
    Data(state): Data<&Arc<PlaygroundRoutes>>,
) -> Response {
    let Some((caller, _)) = authenticated(&state.live, &session_id, &query.token).await else {
        let body = json!({ "error": { "code": "AUTH_FAILED", "message": "the token does not grant this session" } });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    };
    let uri = format!("ui://svc/render/{session_id}");
    let read = match resources::read(&state.agent, &caller, &json!({ "uri": uri })).await {
        Ok(read) => read.into_value(),
        Err(failure) => return refused(failure),
    };
    let content = &read["contents"][0];
    let html = content["text"].as_str().unwrap_or_default().to_owned();
    html.with_content_type("text/html; charset=utf-8")
        .with_header(
            "content-security-policy",
            policy::from_declared(&content["_meta"]["ui"]["csp"]),
        )
        .with_header("cache-control", "no-store")
        .with_header("x-content-type-options", "nosniff")
        // The URL carries the token: no request of the card may repeat it as a referrer.
        .with_header("referrer-policy", "no-referrer")
        .into_response()
}

/// The frame's answer to a read that failed. A refusal with an HTTP status of its own (the CPU
/// gate busy: 503 `SERVER_BUSY` with `Retry-After`) keeps it, its headers and its code, so the
/// page says "busy, try again", not "not found"; the server's own failure (storage; its cause
/// logged where it happened) is a 500 `INTERNAL`, which a retry may cure; any other is a
/// document there is nothing to mount of (404 `NOT_MOUNTABLE`).
fn refused(failure: RpcFailure) -> Response {
    if failure.code == INTERNAL_ERROR {
        let body = json!({ "error": { "code": "INTERNAL", "message": "the card could not be read; try again" } });
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response();
    }
    let data = failure.data.as_deref();
    let message = data
        .and_then(|data| data["message"].as_str())
        .unwrap_or(&failure.message)
        .to_owned();
    if failure.status == StatusCode::OK {
        let body = json!({ "error": { "code": "NOT_MOUNTABLE", "message": message } });
        return (StatusCode::NOT_FOUND, Json(body)).into_response();
    }
    let mut error =
        json!({ "code": data.and_then(|data| data["code"].as_str()).unwrap_or("UNAVAILABLE"), "message": message });
    if let Some(retry_after) = data.and_then(|data| data.get("retryAfterSeconds")) {
        error["retryAfterSeconds"] = retry_after.clone();
    }
    let mut response = (failure.status, Json(json!({ "error": error }))).into_response();
    for (name, value) in failure.headers {
        if let Ok(value) = value.parse() {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answer(failure: RpcFailure) -> (StatusCode, serde_json::Value) {
        let response = refused(failure);
        let status = response.status();
        let body = response.into_body().into_vec().await.unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn the_servers_own_failure_is_a_500_not_a_document_with_nothing_to_mount() {
        let (status, body) = answer(RpcFailure::new(INTERNAL_ERROR, "Internal error")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"]["code"], "INTERNAL", "{body}");
        assert_eq!(body["error"]["message"], "the card could not be read; try again");
    }

    #[tokio::test]
    async fn a_render_with_nothing_to_mount_stays_a_404_naming_why() {
        let failure = RpcFailure::new(svc_protocol::MOUNT_UNAVAILABLE, "Mount unavailable")
            .with_data(json!({ "code": "NOT_SUPPORTED", "message": "the MCP-Apps option is off" }));
        let (status, body) = answer(failure).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["code"], "NOT_MOUNTABLE", "{body}");
        assert_eq!(body["error"]["message"], "the MCP-Apps option is off");
    }
}
