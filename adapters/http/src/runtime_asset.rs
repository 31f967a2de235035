//! `GET /_svc/iframe-runtime.js`: the committed mount runtime bundle (built from adapters/mount),
//! gzipped for a client that accepts it (a third of its size, deflated once per process).

use std::sync::LazyLock;

use bytes::Bytes;
use poem::http::{HeaderValue, StatusCode, header};
use poem::{Request, Response, handler};

use crate::content_coding::ContentCoding;
use crate::if_none_match;
use crate::mcp::answer_pieces;

/// The runtime as our card documents inline it: it rewrites a component by the `links` the
/// server sends with it (docs/live-channel.md).
pub const RUNTIME_JS: &str = include_str!("../../mount/dist/iframe-runtime.js");

/// A classic script that gives the runtime its module lexer (`globalThis.__svcModuleLexer`), for
/// code that comes without links: gadget bundles, and the shell's component.
pub const MODULE_LEXER_JS: &str = include_str!("../../mount/dist/module-lexer.js");

/// What this route serves: lexer and runtime in one module, for a shell of someone else's that
/// hands the runtime a component without links.
static STANDALONE_JS: LazyLock<String> = LazyLock::new(|| format!("{MODULE_LEXER_JS}\n{RUNTIME_JS}"));

/// Content hash of the bundle: the `?v=` that makes a URL immutable, and its ETag.
pub static RUNTIME_HASH: LazyLock<String> = LazyLock::new(|| short_hash(STANDALONE_JS.as_bytes()));

/// The bundle as one gzip member, deflated for the first client that accepts gzip.
static RUNTIME_GZIP: LazyLock<Bytes> = LazyLock::new(|| answer_pieces::gzip_whole(STANDALONE_JS.as_str()));

/// Each coding is a representation of its own, so each has its own strong validator (RFC 9110
/// §8.8.3), each the hash of the bytes it is sent as.
static IDENTITY_ETAG: LazyLock<String> = LazyLock::new(|| format!("\"{}\"", *RUNTIME_HASH));
static GZIP_ETAG: LazyLock<String> = LazyLock::new(|| format!("\"{}\"", short_hash(&RUNTIME_GZIP)));
/// The query parameter naming this bundle.
static VERSION_PARAMETER: LazyLock<String> = LazyLock::new(|| format!("v={}", *RUNTIME_HASH));

fn short_hash(bytes: &[u8]) -> String {
    svc_domain::contract::sha256_hex(bytes)[..16].to_owned()
}

#[handler]
pub async fn serve(req: &Request) -> Response {
    let coding = ContentCoding::accepted_by(req);
    let etag = match coding {
        ContentCoding::Identity => IDENTITY_ETAG.as_str(),
        ContentCoding::Gzip => GZIP_ETAG.as_str(),
    };
    // A URL naming the content hash never changes; the bare URL is revalidated.
    let pinned = req
        .uri()
        .query()
        .is_some_and(|query| query.split('&').any(|pair| pair == VERSION_PARAMETER.as_str()));
    let cache = if pinned {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    // A 304 carries what the 200 would have said of caching (RFC 9110 §15.4.5).
    let builder = Response::builder()
        .header(header::CACHE_CONTROL, cache)
        .header(header::ETAG, etag)
        .header(header::VARY, HeaderValue::from_static("accept-encoding"))
        .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    if req
        .header(header::IF_NONE_MATCH)
        .is_some_and(|tags| if_none_match::names(tags, etag))
    {
        return builder.status(StatusCode::NOT_MODIFIED).finish();
    }
    let builder = builder.content_type("text/javascript; charset=utf-8");
    match coding {
        ContentCoding::Identity => builder.body(STANDALONE_JS.as_str()),
        ContentCoding::Gzip => builder
            .header(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))
            .body(RUNTIME_GZIP.clone()),
    }
}
