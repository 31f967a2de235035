//! The answer of `POST /oauth/token` and `POST /oauth/register` to a body not read whole: an
//! OAuth error (RFC 6749 section 5.2's shape, never cached) under the status the body-limit
//! layer gives the same failure of a body of no declared length (`crate::body_limit::Unread`),
//! marked as answered ([`AnsweredUnread`]) so that layer passes it on for a body of no declared
//! length too: a client hears the same answer whichever transfer form it used.

use poem::http::{HeaderValue, header};
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::json;

use super::no_store;
use super::params::MAX_BODY_BYTES;
use crate::body_limit::{AnsweredUnread, Unread};

/// `Retry-After` of a body refused for the budget of bodies in flight: the body-limit layer's.
const BUSY_RETRY_AFTER_SECONDS: u16 = 1;

/// 413 `invalid_request` past 64 KiB, 408 `invalid_request` for a body that paused or took too
/// long, 503 `temporarily_unavailable` with `Retry-After` for one refused for the budget, 400
/// `broken_code` (the route's own code for a body it cannot use) for one that broke off.
pub(super) fn unread_body_answer(unread: Unread, broken_code: &str) -> Response {
    let (code, description) = match unread {
        Unread::TooLarge => (
            "invalid_request",
            format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
        ),
        Unread::Paused => ("invalid_request", "the request body did not arrive in time".to_owned()),
        Unread::Busy => (
            "temporarily_unavailable",
            "the server is receiving as many request bodies as it holds at once; retry shortly".to_owned(),
        ),
        Unread::Broken => (broken_code, "the request body could not be read".to_owned()),
    };
    let body = Json(json!({ "error": code, "error_description": description }));
    let mut answer = no_store((unread.status(), body).into_response());
    if unread == Unread::Busy {
        answer
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(BUSY_RETRY_AFTER_SECONDS));
    }
    AnsweredUnread::mark(unread, answer)
}

#[cfg(test)]
mod tests {
    use poem::http::StatusCode;

    use super::*;

    async fn answered(unread: Unread) -> (StatusCode, Option<String>, serde_json::Value) {
        let answer = unread_body_answer(unread, "invalid_client_metadata");
        let status = answer.status();
        let retry_after = answer
            .headers()
            .get(header::RETRY_AFTER)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = serde_json::from_slice(&answer.into_body().into_vec().await.unwrap()).unwrap();
        (status, retry_after, body)
    }

    /// Each failure under the status the body-limit layer answers it with.
    #[tokio::test]
    async fn each_unread_body_is_an_oauth_error_under_the_body_limits_status() {
        for unread in [Unread::TooLarge, Unread::Paused, Unread::Busy, Unread::Broken] {
            let (status, _, body) = answered(unread).await;
            assert_eq!(status, unread.refusal(MAX_BODY_BYTES).status(), "{unread:?}");
            assert!(body["error"].is_string(), "{unread:?}: {body}");
        }
        let (_, retry_after, body) = answered(Unread::Busy).await;
        assert_eq!(retry_after.as_deref(), Some("1"));
        assert_eq!(body["error"], "temporarily_unavailable");
        let (_, retry_after, body) = answered(Unread::Broken).await;
        assert_eq!(retry_after, None);
        assert_eq!(body["error"], "invalid_client_metadata");
    }
}
