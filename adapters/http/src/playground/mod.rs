//! `GET /_svc/playground`: a local MCP-Apps host page for the operator (docs/playground.md). It
//! lists recent sessions, mounts the chosen card with the official ext-apps AppBridge, and shows
//! the actions the card sent and what `svc_consume` drained. Served only when the server listens
//! on loopback or runs in `--dev-allow-all` mode; otherwise every path below answers 404.
//!
//! - `/_svc/playground`: the page (`adapters/mount/playground/index.html`), under a strict policy
//!   (scripts, styles and connections from this origin only, no inline script);
//! - `/_svc/playground/playground.js`, `/playground.css`: its committed bundle and stylesheet;
//! - `/_svc/playground/card/<sessionId>?token=<wsToken>`: the render's `ui://` document, for the
//!   page's sandboxed frame, under the policy built from the resource's declared `_meta.ui.csp`.

mod card;
pub(crate) mod policy;

use std::sync::Arc;

use poem::web::Data;
use poem::{EndpointExt, IntoResponse, Response, Route, get, handler};

use crate::route_states::PlaygroundRoutes;

pub const PATH: &str = "/_svc/playground";

const PAGE_HTML: &str = include_str!("../../../mount/playground/index.html");
const PAGE_CSS: &str = include_str!("../../../mount/playground/playground.css");
const PAGE_JS: &str = include_str!("../../../mount/dist/playground.js");

/// The page's own policy: nothing inline, nothing from elsewhere; frames only from this origin
/// (the card documents), and no page may frame it.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     frame-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The playground's routes, or 404 everywhere when `served` is false.
pub fn routes(served: bool) -> impl poem::Endpoint<Output = Response> {
    Route::new()
        .at("/", get(page))
        .at("/playground.js", get(script))
        .at("/playground.css", get(stylesheet))
        .at("/card/:session_id", get(card::serve))
        .with_if(!served, crate::unmounted::Unmounted)
        .map_to_response()
}

#[handler]
async fn page(Data(state): Data<&Arc<PlaygroundRoutes>>) -> Response {
    // The page signs in with a key unless the server accepts any bearer (docs/playground.md).
    let auth = if state.open { "open" } else { "key" };
    PAGE_HTML
        .replace("{{AUTH}}", auth)
        .with_content_type("text/html; charset=utf-8")
        .with_header("content-security-policy", PAGE_POLICY)
        .with_header("cache-control", "no-store")
        .with_header("x-content-type-options", "nosniff")
        .with_header("referrer-policy", "no-referrer")
        .into_response()
}

#[handler]
async fn script() -> Response {
    PAGE_JS
        .with_content_type("text/javascript; charset=utf-8")
        .with_header("cache-control", "no-cache")
        .with_header("x-content-type-options", "nosniff")
        .into_response()
}

#[handler]
async fn stylesheet() -> Response {
    PAGE_CSS
        .with_content_type("text/css; charset=utf-8")
        .with_header("cache-control", "no-cache")
        .with_header("x-content-type-options", "nosniff")
        .into_response()
}
