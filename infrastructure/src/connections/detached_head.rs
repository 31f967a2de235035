//! A request head that does not pin hyper's read buffer.
//!
//! hyper parses a request's URI and header values as slices of the 8 KiB buffer it read them
//! into, so while a request is in progress (a 25 s `svc_consume`, a live poll) that buffer stays
//! allocated and hyper's next read needs another: 16 KiB per held request instead of 8. Copying
//! the URI and the values out (a few hundred bytes) lets the buffer be reused (issue 18: memory
//! per long-poll).

use hyper::Request;
use poem::http::{HeaderValue, Method, Uri};

/// Whether a request can be held open for long (a JSON-RPC long-poll is a POST, a live poll a
/// GET of `/_svc/poll/...`): only those are worth the copy (a few thousand instructions).
pub fn may_be_held<B>(request: &Request<B>) -> bool {
    request.method() == Method::POST || request.uri().path().starts_with("/_svc/poll/")
}

/// The same request, its URI and header values in allocations of their own.
pub fn detach<B>(request: Request<B>) -> Request<B> {
    let (mut parts, body) = request.into_parts();
    if let Ok(uri) = parts.uri.to_string().parse::<Uri>() {
        parts.uri = uri;
    }
    for value in parts.headers.values_mut() {
        if let Ok(mut owned) = HeaderValue::from_bytes(value.as_bytes()) {
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
            .body(())
            .unwrap();
        let detached = detach(request);
        assert_eq!(detached.uri(), "/apps/a1/mcp?x=1");
        assert_eq!(detached.method(), "POST");
        assert_eq!(detached.headers()["authorization"], "Bearer k");
        assert_eq!(detached.headers()["x-custom"], "v");
    }

    #[test]
    fn posts_and_live_polls_may_be_held() {
        let request = |method: &str, uri: &str| Request::builder().method(method).uri(uri).body(()).unwrap();
        assert!(may_be_held(&request("POST", "/mcp")));
        assert!(may_be_held(&request("GET", "/_svc/poll/s1")));
        assert!(!may_be_held(&request("GET", "/healthz")));
    }
}
