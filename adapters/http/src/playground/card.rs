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

use super::policy;
use crate::live::polling::authenticated;
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
        Err(failure) => {
            let message = failure
                .data
                .as_ref()
                .and_then(|data| data["message"].as_str())
                .unwrap_or(&failure.message)
                .to_owned();
            let body = json!({ "error": { "code": "NOT_MOUNTABLE", "message": message } });
            return (StatusCode::NOT_FOUND, Json(body)).into_response();
        }
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
