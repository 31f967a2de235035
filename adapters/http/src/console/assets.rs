//! The console's committed bundle (adapters/console/dist), served under a strict content security
//! policy: scripts and styles only from this origin, no inline script, no framing.

use poem::{IntoResponse, Response, handler};

const INDEX_HTML: &str = include_str!("../../../console/dist/index.html");
const APP_JS: &str = include_str!("../../../console/dist/app.js");
const APP_CSS: &str = include_str!("../../../console/dist/app.css");

/// The policy of the page: everything from this origin, nothing inline, nothing framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(body: &'static str, content_type: &str) -> Response {
    body.with_content_type(content_type)
        .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
        .with_header("x-content-type-options", "nosniff")
        .with_header("referrer-policy", "no-referrer")
        .with_header("cache-control", "no-cache")
        .into_response()
}

#[handler]
pub fn index() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8")
}

#[handler]
pub fn script() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

#[handler]
pub fn stylesheet() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}
