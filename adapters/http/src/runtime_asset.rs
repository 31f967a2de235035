//! `GET /_svc/iframe-runtime.js`: the committed mount runtime bundle (built from adapters/mount),
//! gzipped for a client that accepts it (a third of its size, deflated once per process).

use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use poem::http::{HeaderValue, StatusCode, header};
use poem::{Request, Response, handler};

use crate::content_coding::ContentCoding;
use crate::mcp::answer_pieces::{self, AnswerPiece, KeptText};

pub const RUNTIME_JS: &str = include_str!("../../mount/dist/iframe-runtime.js");

/// Content hash of the bundle: the ETag, and the `?v=` that makes a URL immutable.
pub static RUNTIME_HASH: LazyLock<String> =
    LazyLock::new(|| svc_domain::contract::sha256_hex(RUNTIME_JS.as_bytes())[..16].to_owned());

/// The bundle as one gzip member, deflated for the first client that accepts gzip.
static RUNTIME_GZIP: LazyLock<Bytes> = LazyLock::new(|| {
    let bundle = AnswerPiece::Kept(Arc::new(KeptText::new(RUNTIME_JS)));
    Bytes::from(answer_pieces::gzip(&[bundle]).concat())
});

#[handler]
pub async fn serve(req: &Request) -> Response {
    let coding = ContentCoding::accepted_by(req);
    // Each coding is its own representation, so each has its own strong validator (RFC 9110 §8.8.3).
    let etag = match coding {
        ContentCoding::Identity => format!("\"{}\"", *RUNTIME_HASH),
        ContentCoding::Gzip => format!("\"{}-gzip\"", *RUNTIME_HASH),
    };
    if req
        .header(header::IF_NONE_MATCH)
        .is_some_and(|tags| none_match_fails(tags, &etag))
    {
        return Response::builder()
            .status(StatusCode::NOT_MODIFIED)
            .header(header::ETAG, etag)
            .header(header::VARY, HeaderValue::from_static("accept-encoding"))
            .finish();
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
    let builder = Response::builder()
        .content_type("text/javascript; charset=utf-8")
        .header(header::CACHE_CONTROL, cache)
        .header(header::ETAG, etag)
        .header(header::VARY, HeaderValue::from_static("accept-encoding"))
        .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    match coding {
        ContentCoding::Identity => builder.body(RUNTIME_JS),
        ContentCoding::Gzip => builder
            .header(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))
            .body(RUNTIME_GZIP.clone()),
    }
}

/// Whether an `If-None-Match` list names `etag` (or is `*`), so the GET answers 304. The
/// comparison is weak (RFC 9110 §13.1.2): `W/"x"` matches `"x"`.
fn none_match_fails(tags: &str, etag: &str) -> bool {
    tags.split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_is_a_weak_comparison_over_a_list() {
        let etag = "\"abc\"";
        for tags in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "*", "\"x\",W/\"abc\""] {
            assert!(none_match_fails(tags, etag), "{tags}");
        }
        for tags in ["\"abcd\"", "abc", "\"x\"", "W/\"ab\"", ""] {
            assert!(!none_match_fails(tags, etag), "{tags}");
        }
    }
}
