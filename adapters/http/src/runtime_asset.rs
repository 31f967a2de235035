//! `GET /_svc/iframe-runtime.js`: the committed mount runtime bundle (built from adapters/mount).

use poem::http::StatusCode;
use poem::{IntoResponse, Request, Response, handler};
use std::sync::LazyLock;

pub const RUNTIME_JS: &str = include_str!("../../mount/dist/iframe-runtime.js");

/// Content hash of the bundle: the ETag, and the `?v=` that makes a URL immutable.
pub static RUNTIME_HASH: LazyLock<String> =
    LazyLock::new(|| svc_domain::contract::sha256_hex(RUNTIME_JS.as_bytes())[..16].to_owned());

#[handler]
pub async fn serve(req: &Request) -> Response {
    let etag = format!("\"{}\"", *RUNTIME_HASH);
    if req.header("if-none-match") == Some(etag.as_str()) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    // A URL carrying the content hash never changes; the bare URL is revalidated.
    let cache = if req
        .uri()
        .query()
        .is_some_and(|q| q.contains(&format!("v={}", *RUNTIME_HASH)))
    {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    RUNTIME_JS
        .with_content_type("text/javascript; charset=utf-8")
        .with_header("cache-control", cache)
        .with_header("etag", etag)
        .with_header("access-control-allow-origin", "*")
        .into_response()
}
