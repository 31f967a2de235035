//! Authentication failures of the tool routes (`/mcp`, `/apps/<appId>/mcp`, `/ops`): `AuthError`
//! as HTTP 401 with -32007 and a `WWW-Authenticate` challenge, a deprovisioned app as HTTP 403 with
//! -32003 and the strict `app_deprovisioned` refusal, a failure of the server as -32603.

use poem::Response;
use poem::http::StatusCode;
use serde_json::{Value, json};
use svc_application::services::auth::AuthError;
use svc_domain::refusal::RefusalCode;
use svc_protocol::{APP_NOT_FOUND, INTERNAL_ERROR, UNAUTHORIZED};

use crate::mcp::jsonrpc::RpcFailure;

fn unauthorized(message: &str) -> Response {
    let mut response = RpcFailure::new(UNAUTHORIZED, message)
        .with_status(StatusCode::UNAUTHORIZED)
        .into_response(Value::Null);
    response.headers_mut().insert(
        "www-authenticate",
        r#"Bearer realm="mcp""#.parse().expect("static header"),
    );
    response
}

/// The answer to a failed bearer check of a tool route (`/mcp`, `/ops`).
pub fn auth_failure(error: AuthError) -> Response {
    match error {
        AuthError::Anonymous => unauthorized("Unauthorized: a bearer token is required"),
        AuthError::InvalidToken => unauthorized("Unauthorized: invalid bearer token"),
        AuthError::AppDeprovisioned(app_id) => deprovisioned(app_id).into_response(Value::Null),
        AuthError::Internal(cause) => {
            tracing::error!(error = ?cause, "authentication failed");
            RpcFailure::new(INTERNAL_ERROR, "Internal error").into_response(Value::Null)
        }
    }
}

/// -32003 with the strict refusal: exactly `code, message, fix, retry, appId`, never `fixBy`.
pub fn deprovisioned(app_id: String) -> RpcFailure {
    let entry = RefusalCode::AppDeprovisioned.entry();
    RpcFailure::new(APP_NOT_FOUND, "App not found")
        .with_status(StatusCode::FORBIDDEN)
        .with_data(json!({
            "refusal": {
                "code": entry.code,
                "message": format!("app {app_id} is not served by this endpoint"),
                "fix": entry.fix,
                "retry": entry.retry.as_str(),
                "appId": app_id,
            }
        }))
}
