//! The one answer of every per-address limit (Document 2, Errors): 429, `Retry-After` in seconds
//! and `{ error: { code: "rate_limited", message, retryAfter } }`, with a `rate_limit_hit` log
//! line naming the quota key.

use std::net::IpAddr;

use poem::http::StatusCode;
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::json;

pub(crate) fn rate_limited(quota_key: &str, ip: IpAddr, message: &str, retry_after: u64) -> Response {
    tracing::warn!(quota_key, %ip, retry_after, "rate_limit_hit");
    let body = json!({ "error": { "code": "rate_limited", "message": message, "retryAfter": retry_after } });
    let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
    response.headers_mut().insert("retry-after", retry_after.into());
    response
}
