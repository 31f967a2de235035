//! 503 `SERVER_BUSY` with `Retry-After`, for routes that are not JSON-RPC (those answer
//! `errors::server_busy`): the same words whichever work is full, as JSON for API callers and
//! as a page for the HTML forms.

use poem::http::{HeaderValue, StatusCode, header};
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::json;
use svc_application::services::cpu_gate::CpuBusy;

use crate::oauth::{escape, html_page};

/// `{ error: { code: "SERVER_BUSY", message } }`, 503, told to retry after `busy`'s seconds.
pub(crate) fn busy_json(busy: CpuBusy, message: &str) -> Response {
    let body = json!({ "error": { "code": "SERVER_BUSY", "message": message } });
    retry_after((StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response(), busy)
}

/// The form pages' 503: every place to check a password is taken (`hashing.rs` of the account
/// service); going back and sending the form again in a moment works.
pub(crate) fn busy_page(busy: CpuBusy) -> Response {
    let title = "The server is busy";
    let text = "Too many passwords are being checked right now. Go back and send the form again in a moment.";
    let page = html_page(
        StatusCode::SERVICE_UNAVAILABLE,
        title,
        &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)),
    );
    retry_after(page, busy)
}

fn retry_after(mut response: Response, busy: CpuBusy) -> Response {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(busy.retry_after_seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_busy_answer_is_503_with_retry_after_as_json_and_as_a_page() {
        let busy = CpuBusy { retry_after_seconds: 2 };
        let json = busy_json(busy, "retry shortly");
        assert_eq!(json.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(json.headers()[header::RETRY_AFTER], "2");
        let body: serde_json::Value = serde_json::from_slice(&json.into_body().into_vec().await.unwrap()).unwrap();
        assert_eq!(body["error"]["code"], "SERVER_BUSY");

        let page = busy_page(busy);
        assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(page.headers()[header::RETRY_AFTER], "2");
        let html = page.into_body().into_string().await.unwrap();
        assert!(html.contains("The server is busy"), "{html}");
    }
}
