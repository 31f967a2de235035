//! The middleware in front of every route: the request id (an incoming `X-Request-Id` when it is
//! sane, else a new one; echoed on the response), one access-log line, and the request metrics.
//! The line never carries a header value or a body: bearers, keys and tokens stay out of logs.
//! A response whose body is the answer itself ([`AnswerInBody`]: a long-poll answered later, a
//! progress stream) is timed and logged when its body ends, not when its head is sent.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use poem::http::HeaderValue;
use poem::{Body, Endpoint, IntoResponse, Middleware, Request, Response, Result};
use tracing::Instrument;

use svc_application::ports::Ids;

use super::metrics::METRICS;
use super::route_label::route_label;

const HEADER: &str = "x-request-id";
const MAX_INCOMING_ID: usize = 128;

/// What a JSON-RPC response answered: the tool name of a `tools/call`, else the method. Set by
/// the JSON-RPC handlers in the response's extensions; the access line and metrics read it.
#[derive(Debug, Clone)]
pub struct RpcLabel(pub &'static str);

/// Set on a response whose head goes out before its answer is ready (the answer is its body).
#[derive(Debug, Clone, Copy)]
pub struct AnswerInBody;

/// `ids` mints the id of a request that came without a sane one.
pub struct Observe {
    pub ids: Arc<dyn Ids>,
}

impl<E: Endpoint> Middleware<E> for Observe {
    type Output = ObserveEndpoint<E>;

    fn transform(&self, inner: E) -> Self::Output {
        ObserveEndpoint {
            inner,
            ids: self.ids.clone(),
        }
    }
}

pub struct ObserveEndpoint<E> {
    inner: E,
    ids: Arc<dyn Ids>,
}

impl<E: Endpoint> Endpoint for ObserveEndpoint<E> {
    type Output = Response;

    /// The request's labels are read here and the request moved on at once: the future holds
    /// the inner one and the labels, not the request (`layered.rs`).
    fn call(&self, req: Request) -> impl Future<Output = Result<Self::Output>> + Send {
        let started = Instant::now();
        // Kept as the header value it is echoed in: an incoming one is shared, a minted one moved.
        let id = req
            .headers()
            .get(HEADER)
            .filter(|incoming| incoming.to_str().is_ok_and(acceptable))
            .cloned()
            .or_else(|| HeaderValue::from_maybe_shared(bytes::Bytes::from(self.ids.uuid())).ok());
        let method = method_label(req.method());
        let route = route_label(req.uri().path());
        // Every log line of the request carries its id through this span.
        let request_id = id.as_ref().and_then(|id| id.to_str().ok()).unwrap_or_default();
        // Plain strings, not `%` (Display): the log writes a string without `core::fmt`.
        let span = tracing::info_span!("request", request_id, method, route);
        // Entered while the inner layers decide from the head too: a refusal they log carries it.
        let answering = span.in_scope(|| self.inner.call(req)).instrument(span.clone());
        async move {
            let response = match answering.await {
                Ok(output) => output.into_response(),
                Err(error) => error.into_response(),
            };
            Ok(finish(
                response,
                id,
                Begun {
                    started,
                    route,
                    method,
                    span,
                },
            ))
        }
    }
}

/// What the access line and the metrics know of a request before its answer.
struct Begun {
    started: Instant,
    route: &'static str,
    method: &'static str,
    span: tracing::Span,
}

/// Echoes the request id, counts the request, and logs it now or when its body ends.
fn finish(mut response: Response, id: Option<HeaderValue>, begun: Begun) -> Response {
    let Begun {
        started,
        route,
        method,
        span,
    } = begun;
    let status = response.status();
    let rpc = response.extensions().get::<RpcLabel>().map(|label| label.0);
    if let Some(id) = id {
        response.headers_mut().insert(HEADER, id);
    }
    METRICS
        .requests
        .with_label_values(&[route, method, status.as_str()])
        .inc();
    let answered = Answered {
        started,
        route,
        status: status.as_u16(),
        rpc,
        span,
    };
    if response.extensions().get::<AnswerInBody>().is_none() {
        answered.record();
        return response;
    }
    // Recorded when the body ends, or is dropped (the client went away).
    let body = response.take_body().into_bytes_stream();
    let on_end = Recorded(Some(answered));
    response.set_body(Body::from_bytes_stream(body.map(move |chunk| {
        let _ = &on_end;
        chunk
    })));
    response
}

/// A request's answer, to time and log once it is complete.
struct Answered {
    started: Instant,
    route: &'static str,
    status: u16,
    rpc: Option<&'static str>,
    span: tracing::Span,
}

impl Answered {
    fn record(self) {
        let elapsed = self.started.elapsed();
        let rpc = self.rpc;
        METRICS
            .latency
            .with_label_values(&[self.route, rpc.unwrap_or("-")])
            .observe(elapsed.as_secs_f64());
        // Entered, not named as the parent: `RUST_LOG`'s span rules (`[request]=info`) see only
        // entered spans.
        self.span.in_scope(|| {
            tracing::info!(
                target: "svc::access",
                status = self.status,
                duration_ms = elapsed.as_secs_f64() * 1000.0,
                rpc = rpc.unwrap_or(""),
                "request"
            )
        });
    }
}

/// Records its answer when dropped.
struct Recorded(Option<Answered>);

impl Drop for Recorded {
    fn drop(&mut self) {
        if let Some(answered) = self.0.take() {
            answered.record();
        }
    }
}

/// The method as a label: a known verb, or `OTHER` (hyper accepts any token as a method, and a
/// client must not grow the metrics without bound).
fn method_label(method: &poem::http::Method) -> &'static str {
    use poem::http::Method;
    const KNOWN: [(Method, &str); 7] = [
        (Method::GET, "GET"),
        (Method::POST, "POST"),
        (Method::PUT, "PUT"),
        (Method::DELETE, "DELETE"),
        (Method::HEAD, "HEAD"),
        (Method::OPTIONS, "OPTIONS"),
        (Method::PATCH, "PATCH"),
    ];
    KNOWN
        .iter()
        .find(|(known, _)| known == method)
        .map_or("OTHER", |(_, label)| label)
}

/// An incoming id is kept only when short and plain (it goes into logs and a response header).
fn acceptable(incoming: &str) -> bool {
    !incoming.is_empty()
        && incoming.len() <= MAX_INCOMING_ID
        && incoming
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod tests {
    use super::acceptable;

    #[test]
    fn methods_outside_the_known_verbs_are_one_label() {
        use poem::http::Method;
        assert_eq!(super::method_label(&Method::POST), "POST");
        assert_eq!(super::method_label(&Method::from_bytes(b"XRANDOM1").unwrap()), "OTHER");
    }

    #[test]
    fn only_short_plain_incoming_ids_are_kept() {
        assert!(acceptable("req-42_a.b:c"));
        assert!(!acceptable(""));
        assert!(!acceptable("has space"));
        assert!(!acceptable("line\nbreak"));
        assert!(!acceptable(&"x".repeat(129)));
    }
}
