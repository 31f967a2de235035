//! A request head that does not pin hyper's read buffer.
//!
//! hyper parses a request's URI and header values as slices of the 8 KiB buffer it read them
//! into, so while a request is in progress (a 25 s `svc_consume`, a live poll) that buffer stays
//! allocated and hyper's next read needs another: 16 KiB per held request instead of 8. Copying
//! the URI and the values out (a few hundred bytes) lets the buffer be reused (issue 18: memory
//! per long-poll).

use bytes::BytesMut;
use hyper::Request;
use poem::http::{HeaderValue, Method, Uri};

/// Whether a request can be held open for long (a JSON-RPC long-poll is a POST, a live poll a
/// GET of `/_svc/poll/...`): only those are worth the copy (a few thousand instructions).
pub fn may_be_held<B>(request: &Request<B>) -> bool {
    request.method() == Method::POST || request.uri().path().starts_with("/_svc/poll/")
}

/// The same request, its URI and header values copied out of hyper's buffer into one allocation
/// of their own (one per value was seven of a typical POST's allocations: issue 18).
pub fn detach<B>(request: Request<B>) -> Request<B> {
    use std::fmt::Write;
    let (mut parts, body) = request.into_parts();
    let values: usize = parts.headers.values().map(|value| value.len()).sum();
    let mut copy = BytesMut::with_capacity(values + 128);
    // Writing into a `BytesMut` cannot fail (it grows as needed).
    let _ = write!(copy, "{}", parts.uri);
    let uri_end = copy.len();
    for value in parts.headers.values() {
        copy.extend_from_slice(value.as_bytes());
    }
    let mut copy = copy.freeze();
    if let Ok(uri) = Uri::from_maybe_shared(copy.split_to(uri_end)) {
        parts.uri = uri;
    }
    for value in parts.headers.values_mut() {
        let own = copy.split_to(value.len());
        if let Ok(mut owned) = HeaderValue::from_maybe_shared(own) {
            owned.set_sensitive(value.is_sensitive());
            *value = owned;
        }
    }
    Request::from_parts(parts, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detached_request_reads_the_same() {
        let request = Request::builder()
            .method("POST")
            .uri("/apps/a1/mcp?x=1")
            .header("authorization", "Bearer k")
            .header("x-custom", "v")
            .header("x-custom", "second")
            .header("x-empty", "")
            .body(())
            .unwrap();
        let detached = detach(request);
        assert_eq!(detached.uri(), "/apps/a1/mcp?x=1");
        assert_eq!(detached.uri().query(), Some("x=1"));
        assert_eq!(detached.method(), "POST");
        assert_eq!(detached.headers()["authorization"], "Bearer k");
        let custom: Vec<_> = detached.headers().get_all("x-custom").iter().collect();
        assert_eq!(custom, ["v", "second"]);
        assert_eq!(detached.headers()["x-empty"], "");
        let absolute = detach(Request::builder().uri("http://127.0.0.1:6781/mcp").body(()).unwrap());
        assert_eq!(absolute.uri().authority().map(|a| a.as_str()), Some("127.0.0.1:6781"));
    }

    #[test]
    fn posts_and_live_polls_may_be_held() {
        let request = |method: &str, uri: &str| Request::builder().method(method).uri(uri).body(()).unwrap();
        assert!(may_be_held(&request("POST", "/mcp")));
        assert!(may_be_held(&request("GET", "/_svc/poll/s1")));
        assert!(!may_be_held(&request("GET", "/healthz")));
    }
}
