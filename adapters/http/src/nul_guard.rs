//! Ids in paths (`/apps/<appId>/mcp`, `/_svc/invites/<id>/accept`, `/_svc/poll/<sessionId>`) and
//! query strings are looked up in text columns, and PostgreSQL `text` cannot hold U+0000: a URL
//! carrying one (`%00`) is the caller's error, answered 400 on every route and both backends
//! before any handler runs (`svc_domain::text::NUL_RULE`).

use std::future::Future;

use poem::http::StatusCode;
use poem::web::Json;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};
use serde_json::json;
use svc_domain::text::NUL_RULE;

use crate::layered;

/// Wraps an endpoint so a URL holding `%00` never reaches it.
pub struct RefuseNulInUrl;

impl<E: Endpoint> Middleware<E> for RefuseNulInUrl {
    type Output = RefuseNulInUrlEndpoint<E>;

    fn transform(&self, inner: E) -> Self::Output {
        RefuseNulInUrlEndpoint { inner }
    }
}

pub struct RefuseNulInUrlEndpoint<E> {
    inner: E,
}

impl<E: Endpoint> Endpoint for RefuseNulInUrlEndpoint<E> {
    type Output = Response;

    fn call(&self, req: Request) -> impl Future<Output = poem::Result<Response>> + Send {
        match refusal(&req) {
            Some(refused) => layered::answer_now(refused),
            None => layered::pass_on(&self.inner, req),
        }
    }
}

/// The 400 for a URL holding `%00`, if it does.
fn refusal(req: &Request) -> Option<Response> {
    let url = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or_default();
    // Percent-encoding is the only way U+0000 travels in a URL; "%00" has no letters to fold.
    if !url.contains("%00") {
        return None;
    }
    let message = format!("the URL {NUL_RULE}");
    // Browser-facing pages answer in the shape their documents name: an HTML page.
    let path = req.uri().path();
    if path == "/oauth/authorize" || path == "/oauth/oidc/callback" || path.starts_with("/account/") {
        return Some(crate::oauth::authorize_error_page(StatusCode::BAD_REQUEST, &message));
    }
    Some(
        (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": { "code": "invalid_request", "message": message } })),
        )
            .into_response(),
    )
}
