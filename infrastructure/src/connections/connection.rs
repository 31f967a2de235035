//! One accepted connection served by hyper: the header-read deadline (hyper's own, with a timer),
//! the idle deadline, and a graceful close when the server drains.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use poem::endpoint::BoxEndpoint;
use poem::http::uri::Scheme;
use poem::http::{HeaderValue, StatusCode, Version, header};
use poem::web::{LocalAddr, RemoteAddr};
use poem::{Endpoint, IntoResponse};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::ConnectionLimits;
use super::activity::{Activity, WatchedIo};
use super::drained_body::DrainedBody;
use super::slots::{Admission, Slot};

/// The HTTP/2 settings poem's own server uses.
const HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 20;
const HTTP2_MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
/// Requests in flight on one HTTP/2 connection (hyper's default, said here because the README
/// and the long-poll figures rely on it).
const HTTP2_MAX_CONCURRENT_STREAMS: u32 = 200;

/// Routes a health-only connection may call.
const PROBES: [&str; 2] = ["/healthz", "/readyz"];

pub struct Accepted<Io> {
    pub io: Io,
    pub local: LocalAddr,
    pub remote: RemoteAddr,
    pub scheme: Scheme,
    pub slot: Slot,
    pub admission: Admission,
}

/// When the server asks connections to finish: `drain` closes each after its request in
/// progress; `abort` (the grace period is over) drops them.
#[derive(Clone)]
pub struct Stop {
    pub drain: CancellationToken,
    pub abort: CancellationToken,
}

fn refused_route() -> poem::Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        poem::web::Json(serde_json::json!({
            "error": { "code": "OVERLOADED", "message": "the server is at its connection limit or shutting down; only /healthz and /readyz answer on this connection" }
        })),
    )
        .into_response()
}

pub async fn serve<Io>(
    accepted: Accepted<Io>,
    endpoint: Arc<BoxEndpoint<'static>>,
    limits: ConnectionLimits,
    stop: Stop,
) where
    Io: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let Accepted {
        io,
        local,
        remote,
        scheme,
        slot,
        admission,
    } = accepted;
    let activity = Activity::new();
    let io = WatchedIo::new(io, activity.clone(), slot);
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let endpoint = endpoint.clone();
        let req = if super::detached_head::may_be_held(&req) {
            super::detached_head::detach(req)
        } else {
            req
        };
        let (head, body) = req.into_parts();
        let drains = head.version <= Version::HTTP_11 && !head.headers.contains_key(header::EXPECT);
        let head = poem::RequestParts::from((head, local.clone(), remote.clone(), scheme.clone()));
        let body = poem::Body::from(DrainedBody::new(body, drains).boxed());
        let request = poem::Request::from_parts(head, body);
        async move {
            let allowed = admission == Admission::Full || PROBES.contains(&request.uri().path());
            let mut response = if allowed {
                endpoint.get_response(request).await
            } else {
                refused_route()
            };
            if admission == Admission::HealthOnly {
                // Said out loud so that clients do not pool a connection about to close.
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, Infallible>(hyper::Response::from(response))
        }
    });

    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        // A probe connection answers once, so the headroom frees up again.
        .keep_alive(admission == Admission::Full);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_pending_accept_reset_streams(HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS)
        .max_header_list_size(HTTP2_MAX_HEADER_LIST_SIZE)
        .max_concurrent_streams(HTTP2_MAX_CONCURRENT_STREAMS);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(connection);

    let mut closing = false;
    loop {
        // Until the client's first byte the header deadline counts from the accept (hyper's own
        // timer starts only once it knows the protocol); afterwards, silence is bounded by the
        // idle timeout. The check wakes at least once per idle timeout to see which applies.
        let now = tokio::time::Instant::now();
        let wake = if activity.heard_from_client() {
            activity.last() + limits.idle_timeout
        } else {
            (activity.opened() + limits.header_read_timeout).min(now + limits.idle_timeout)
        };
        tokio::select! {
            _ = connection.as_mut() => return,
            () = stop.abort.cancelled() => return,
            // Probe connections answer once and close anyway; they are what a drain still serves.
            () = stop.drain.cancelled(), if !closing && admission == Admission::Full => {
                connection.as_mut().graceful_shutdown();
                closing = true;
            }
            () = tokio::time::sleep_until(wake), if !closing => {
                let now = tokio::time::Instant::now();
                if !activity.heard_from_client() {
                    if now >= activity.opened() + limits.header_read_timeout {
                        // Nothing to finish: not even a request line arrived.
                        return;
                    }
                } else if activity.last() + limits.idle_timeout <= now {
                    // A request in progress (a long-poll) still finishes; the connection closes after it.
                    connection.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}
