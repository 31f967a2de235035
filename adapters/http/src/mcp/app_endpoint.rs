//! `/apps/<appId>/mcp`: the agent tools of one app. Every request is checked against the app
//! before anything else runs (Document 1, "Endpoint-level refusal"); then it is `/mcp` scoped to
//! that app.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, IntoResponse, Request, Response, handler};
use serde_json::Value;
use svc_application::services::agent::Caller;
use svc_application::services::app_endpoint::EndpointDenial;
use svc_protocol::jsonrpc::MAX_ID_BYTES;
use svc_protocol::{INTERNAL_ERROR, UNAUTHORIZED};

use super::jsonrpc::RpcFailure;
use super::{MAX_BODY_BYTES, bearer};
use crate::errors::{auth_failure, deprovisioned};
use crate::route_states::AgentRoutes;

#[handler]
pub async fn post_app_mcp(
    req: &Request,
    body: Body,
    Path(app_id): Path<String>,
    Data(state): Data<&Arc<AgentRoutes>>,
) -> Response {
    // The app first: Document 1 answers any request to a deprovisioned app with its refusal,
    // whatever else is wrong with it (a protocol version this server does not speak included).
    let caller = match caller_for_app(state, req, &app_id).await {
        Ok(caller) => caller,
        Err(denial) => return refuse(state, denial, &app_id, body).await,
    };
    if let Some(refusal) = super::unsupported_protocol_version(req) {
        return refusal;
    }
    super::serve_agent_post(state, req, caller, body).await
}

/// GET and DELETE: the same checks, then 405 as on `/mcp`.
#[handler]
pub async fn other_app_mcp(
    req: &Request,
    Path(app_id): Path<String>,
    Data(state): Data<&Arc<AgentRoutes>>,
) -> Response {
    match caller_for_app(state, req, &app_id).await {
        Ok(_) => {
            let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
            response
                .headers_mut()
                .insert("allow", "POST".parse().expect("static header"));
            response
        }
        Err(denial) => refuse(state, denial, &app_id, Body::empty()).await,
    }
}

async fn caller_for_app(state: &AgentRoutes, req: &Request, app_id: &str) -> Result<Caller, EndpointDenial> {
    state
        .gate
        .auth
        .authenticate_for_app(bearer(req).as_deref(), app_id)
        .await
}

async fn refuse(state: &AgentRoutes, denial: EndpointDenial, app_id: &str, body: Body) -> Response {
    let failure = match denial {
        EndpointDenial::Unauthenticated(error) => return unauthenticated(state, error, app_id),
        EndpointDenial::Forbidden => {
            RpcFailure::new(UNAUTHORIZED, "Forbidden: this credential is not bound to the app")
                .with_status(StatusCode::FORBIDDEN)
        }
        EndpointDenial::AppDeprovisioned { app_id } => return deprovisioned_response(app_id, body).await,
        EndpointDenial::Internal(cause) => {
            tracing::error!(error = ?cause, "per-app endpoint check failed");
            RpcFailure::new(INTERNAL_ERROR, "Internal error").with_status(StatusCode::INTERNAL_SERVER_ERROR)
        }
    };
    failure.into_response(request_id(body).await)
}

/// The refusal of a request for a deprovisioned app, answering the request's id.
pub(crate) async fn deprovisioned_response(app_id: String, body: Body) -> Response {
    deprovisioned(app_id).into_response(request_id(body).await)
}

fn unauthenticated(state: &AgentRoutes, error: svc_application::services::auth::AuthError, app_id: &str) -> Response {
    let mut response = auth_failure(error);
    // The path's id goes into a header only when it is a well-formed (base62) app id.
    if response.status() == StatusCode::UNAUTHORIZED
        && !app_id.is_empty()
        && app_id.chars().all(|c| c.is_ascii_alphanumeric())
        && let Ok(challenge) = state.gate.challenges.app(app_id).parse()
    {
        response.headers_mut().insert("www-authenticate", challenge);
    }
    response
}

/// The refused request's id when the body is a readable JSON-RPC request, so the client can
/// match the error to its call; `null` otherwise. Only the id is kept: the rest of a stranger's
/// body (up to 4 MiB) is checked as JSON and dropped, never built into values.
async fn request_id(body: Body) -> Value {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<EchoedId>,
    }
    let Ok(bytes) = crate::body_limit::read_limited(body, MAX_BODY_BYTES).await else {
        return Value::Null;
    };
    match serde_json::from_slice::<IdOnly>(&bytes) {
        Ok(IdOnly { id: Some(EchoedId(id)) }) => id,
        _ => Value::Null,
    }
}

/// A JSON-RPC id: a string of at most `MAX_ID_BYTES` or a number, as `/mcp` accepts. Anything
/// else stops the parse at once (no array or object is built, and no long string copied, for an
/// id that could never be echoed).
struct EchoedId(Value);

impl<'de> serde::Deserialize<'de> for EchoedId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = EchoedId;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a string of at most {MAX_ID_BYTES} bytes or a number")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<EchoedId, E> {
                if text.len() > MAX_ID_BYTES {
                    return Err(E::invalid_length(text.len(), &self));
                }
                Ok(EchoedId(Value::String(text.to_owned())))
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<EchoedId, E> {
                Ok(EchoedId(Value::from(n)))
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<EchoedId, E> {
                Ok(EchoedId(Value::from(n)))
            }

            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<EchoedId, E> {
                Ok(EchoedId(Value::from(n)))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_refusal_echoes_only_a_string_or_number_id() {
        let rows = [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":[1,2,{"b":null}]}}"#,
                json!(7),
            ),
            (r#"{"params":{"deep":[[[]]]},"id":"call-1"}"#, json!("call-1")),
            (r#"{"id":-2.5}"#, json!(-2.5)),
            (r#"{"id":null}"#, Value::Null),
            (r#"{"id":[1,2,3]}"#, Value::Null),
            (r#"{"id":{"x":1}}"#, Value::Null),
            (r#"{"method":"ping"}"#, Value::Null),
            (r#"[{"id":1}]"#, Value::Null),
            ("not json", Value::Null),
            (
                &format!(r#"{{"id":"{}"}}"#, "i".repeat(MAX_ID_BYTES)),
                json!("i".repeat(MAX_ID_BYTES)),
            ),
            (&format!(r#"{{"id":"{}"}}"#, "i".repeat(MAX_ID_BYTES + 1)), Value::Null),
        ];
        for (body, expected) in rows {
            assert_eq!(request_id(Body::from_string(body.to_owned())).await, expected, "{body}");
        }
    }
}
