//! The console's committed bundle (adapters/console/dist), served under a strict content security
//! policy: scripts and styles only from this origin, no inline script, no framing.

use std::sync::Arc;

use poem::web::Data;
use poem::{IntoResponse, Response, handler};

use crate::route_states::ConsoleRoutes;

const INDEX_HTML: &str = include_str!("../../../console/dist/index.html");
const APP_JS: &str = include_str!("../../../console/dist/app.js");
const APP_CSS: &str = include_str!("../../../console/dist/app.css");

/// The policy of the page: everything from this origin, nothing inline, no page may frame it; its
/// own frames (the blueprint previews) come from this origin only.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; frame-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

fn asset(body: impl Into<String>, content_type: &str) -> Response {
    let body: String = body.into();
    body.with_content_type(content_type)
        .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
        .with_header("x-content-type-options", "nosniff")
        .with_header("referrer-policy", "no-referrer")
        .with_header("cache-control", "no-cache")
        .into_response()
}

/// The page, told which sign-in forms to show (`<body data-sign-in>`): `account` in hosted mode
/// (email and password, or a key), `key` otherwise (the pair code or a key).
#[handler]
pub fn index(Data(state): Data<&Arc<ConsoleRoutes>>) -> Response {
    let accounts = state.sessions.as_ref().is_some_and(|s| s.has_accounts());
    let sign_in = if accounts { "account" } else { "key" };
    asset(INDEX_HTML.replace("{{SIGN_IN}}", sign_in), "text/html; charset=utf-8")
}

#[handler]
pub fn script() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

#[handler]
pub fn stylesheet() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}
