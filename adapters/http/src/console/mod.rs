//! The operator console (docs/console.md): `GET /console` serves the single-page app (built from
//! adapters/console), `/console/session` signs in and out, `/console/ops` runs the `/ops` tools
//! with the session's caller, `/console/blueprints/<id>/preview` mounts a blueprint for the
//! gallery's sandboxed frame. The app calls nothing else, so every screen is exactly what an
//! operator agent can do on `/ops`.

mod assets;
mod cookie;
mod ops;
mod preview;
mod session;

use poem::{Endpoint, EndpointExt, Route, get, post};

use crate::body_limit::{self, BodyLimit};
use crate::guard::HostGuard;

/// Every console route, behind the DNS-rebinding guard (with its `Origin` check).
pub(crate) fn routes(guard: HostGuard) -> impl Endpoint {
    Route::new()
        .at("/", get(assets::index))
        .at("/app.js", get(assets::script))
        .at("/app.css", get(assets::stylesheet))
        .at(
            "/session",
            post(session::sign_in.with(BodyLimit::new(body_limit::SIGN_IN_MAX_BODY_BYTES)))
                .get(session::status)
                .delete(session::sign_out),
        )
        .at("/ops", post(ops::post_console_ops))
        .at("/blueprints/:blueprint_id/preview", get(preview::serve))
        .with(guard)
}

/// The console's own error body, `{ error: { code, message } }`.
pub(crate) fn refusal(status: poem::http::StatusCode, code: &str, message: &str) -> poem::Response {
    use poem::IntoResponse;
    (
        status,
        poem::web::Json(serde_json::json!({ "error": { "code": code, "message": message } })),
    )
        .into_response()
}
