//! `POST /console/ops`: one `/ops` JSON-RPC message, run with the session's caller through the
//! same dispatch as `/ops` (so the console can do exactly what an operator agent can). Needs the
//! session cookie (401 `signed_out`) and its CSRF token (403 `csrf_token_invalid`).

use std::sync::Arc;

use poem::web::Data;
use poem::{Body, IntoResponse, Request, Response, handler};

use super::session::session_for_change;
use crate::route_states::ConsoleRoutes;

#[handler]
pub async fn post_console_ops(req: &Request, body: Body, Data(state): Data<&Arc<ConsoleRoutes>>) -> Response {
    match session_for_change(req, state).await {
        // An answer may hold a key just issued: kept by no cache on the way.
        Ok(session) => crate::ops::answer_as(&state.ops, req, body, session.caller)
            .await
            .with_header("cache-control", "no-store")
            .into_response(),
        Err(refused) => refused.into_response(),
    }
}
