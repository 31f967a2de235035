//! One accepted connection served by hyper: which HTTP it speaks, the header-read deadline (the
//! first head's from the accept, later heads' by hyper's own timer), the idle deadline, and a
//! graceful close when the server drains.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};
use hyper::rt::bounds::Http2ServerConnExec;
use hyper::server::conn::{http1, http2};
use hyper::service::HttpService;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use poem::Endpoint;
use poem::endpoint::BoxEndpoint;
use poem::http::uri::Scheme;
use poem::http::{HeaderValue, Version, header};
use poem::web::{LocalAddr, RemoteAddr};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::activity::{Activity, WatchedIo};
use super::drained_body::DrainedBody;
use super::guarded_body::{BodyRules, GuardedBody};
use super::protocol::{Protocol, sniff};
use super::slots::{Admission, Slot};
use super::watch::{Deadlines, Due, Seen};
use super::{ConnectionLimits, Probes};

/// The HTTP/2 settings poem's own server uses.
const HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 20;
const HTTP2_MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
/// Requests in flight on one HTTP/2 connection (hyper's default, said here because the README
/// and the long-poll figures rely on it).
const HTTP2_MAX_CONCURRENT_STREAMS: u32 = 200;

/// What poem's responses become for hyper.
type ResponseBody = http_body_util::combinators::BoxBody<bytes::Bytes, std::io::Error>;

pub struct Accepted<Io> {
    pub io: Io,
    pub local: LocalAddr,
    pub remote: RemoteAddr,
    pub scheme: Scheme,
    pub slot: Slot,
    pub admission: Admission,
    pub probes: Probes,
}

/// When the server asks connections to finish: `drain` closes each after its request in
/// progress; `abort` (the grace period is over) drops them.
#[derive(Clone)]
pub struct Stop {
    pub drain: CancellationToken,
    pub abort: CancellationToken,
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
        probes,
    } = accepted;
    let activity = Activity::new();
    let io = WatchedIo::new(io, activity.clone(), slot);
    let heads = activity.clone();
    let request_limits = limits.clone();
    // A probe connection's one answer is under way: HTTP/2 has no `Connection: close`, so the
    // connection is closed gracefully (GOAWAY) from here, or it could keep asking until idle.
    let answered = CancellationToken::new();
    let answering = answered.clone();
    // A connection in its address's probe place asked for something else: closed unanswered.
    let refused = CancellationToken::new();
    let refusing = refused.clone();
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        heads.note_head_read();
        let endpoint = endpoint.clone();
        let answering = admission.probes_only().then(|| answering.clone());
        let refusing = refusing.clone();
        let req = if super::detached_head::may_be_held(&req) {
            super::detached_head::detach(req)
        } else {
            req
        };
        let (head, body) = req.into_parts();
        let drains = head.version <= Version::HTTP_11 && !head.headers.contains_key(header::EXPECT);
        let body_rules = BodyRules {
            pause: request_limits.idle_timeout,
            whole: request_limits.body_read_timeout,
            budget: request_limits.body_budget_of(head.uri.path()).clone(),
        };
        let head = poem::RequestParts::from((head, local.clone(), remote.clone(), scheme.clone()));
        let body = GuardedBody::new(DrainedBody::new(body, drains), body_rules);
        let body = poem::Body::from(body.boxed());
        let request = poem::Request::from_parts(head, body);
        // Boxed: hyper keeps one allocation per connection sized for this future, for as long as
        // the connection lives; boxed, that is a pointer, and the request's 2.4 KiB are freed
        // once its response is under way (a held long-poll streams its body later: issue 18).
        Box::pin(async move {
            let allowed = admission == Admission::Full || probes.paths.contains(&request.uri().path());
            if !allowed && admission == Admission::AddressProbe {
                // As a connection past its address's cap is: the connection is dropped
                // (`Served::until_closed`) with this answer never written.
                refusing.cancel();
                return std::future::pending().await;
            }
            let mut response = if allowed {
                endpoint.get_response(request).await
            } else {
                (probes.refused)()
            };
            if admission.probes_only() {
                // Said out loud so that clients do not pool a connection about to close.
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            if let Some(answering) = answering {
                answering.cancel();
            }
            Ok::<_, Infallible>(hyper::Response::from(response))
        }) as BoxFuture<'static, Result<hyper::Response<ResponseBody>, Infallible>>
    });

    let sniffed = tokio::select! {
        sniffed = sniff(io) => sniffed,
        () = stop.abort.cancelled() => return,
        // Nothing was asked yet, so there is nothing to finish.
        () = stop.drain.cancelled(), if admission == Admission::Full => return,
        () = tokio::time::sleep_until(activity.opened() + limits.header_read_timeout) => return,
    };
    let Ok((protocol, io)) = sniffed else { return };
    let io = TokioIo::new(io);
    let header_read_timeout = limits.header_read_timeout;
    let served = Served {
        activity,
        limits,
        stop,
        admission,
        first_head_due: protocol == Protocol::Http1,
        answered,
        refused,
    };
    match protocol {
        Protocol::Http1 => {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                // A probe connection answers once, so the headroom frees up again.
                .keep_alive(!admission.probes_only())
                .serve_connection(io, service)
                .with_upgrades();
            served.until_closed(connection).await;
        }
        Protocol::Http2 => {
            // Boxed as a `Send` connection here, where its types are known: the generic loop
            // cannot prove HTTP/2's connection `Send` itself (a higher-ranked lifetime error).
            let connection: Pin<Box<dyn SendConnection>> = Box::pin(
                http2::Builder::new(TokioExecutor::new())
                    .timer(TokioTimer::new())
                    .max_pending_accept_reset_streams(HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS)
                    .max_header_list_size(HTTP2_MAX_HEADER_LIST_SIZE)
                    .max_concurrent_streams(HTTP2_MAX_CONCURRENT_STREAMS)
                    .serve_connection(io, service),
            );
            served.until_closed(connection).await;
        }
    }
}

/// What a connection is served under, whichever HTTP it speaks.
struct Served {
    activity: Arc<Activity>,
    limits: ConnectionLimits,
    stop: Stop,
    admission: Admission,
    /// The first request's head is due within the header-read timeout of the accept (HTTP/1:
    /// hyper's own timer starts only with the protocol, after the sniff).
    first_head_due: bool,
    /// Cancelled once a probe connection's answer is under way.
    answered: CancellationToken,
    /// Cancelled when a connection in its address's probe place asks for anything but a probe.
    refused: CancellationToken,
}

impl Served {
    /// Drives `connection` until it ends, is aborted, or closes gracefully on a drain or after an
    /// idle timeout.
    async fn until_closed<C: Future + Graceful>(self, connection: C) {
        let Self {
            activity,
            limits,
            stop,
            admission,
            first_head_due,
            answered,
            refused,
        } = self;
        tokio::pin!(connection);
        let mut closing = false;
        let deadlines = Deadlines {
            head_due_at: activity.opened() + limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
        };
        // The sniff has heard the client by now (HTTP/2's whole preface, or HTTP/1's first
        // bytes): silence is bounded by the idle timeout, HTTP/1's first head by the header-read
        // timeout from the accept (a sniff that waited on bytes of the HTTP/2 preface must not
        // lend hyper's timer, which starts after it, that wait), later heads by hyper's own
        // timer, an answer the client stopped reading by the idle timeout (`watch.rs`); a request
        // body that stops arriving is cut off where it is read (`guarded_body.rs`).
        let seen = |closing: bool| Seen {
            waiting_for_first_head: first_head_due && !activity.any_head_read(),
            closing,
            last_heard: activity.heard_from_client().then(|| activity.last()),
            writes_blocked_since: activity.writes_blocked_since(),
        };
        loop {
            let wake = deadlines.wake_at(seen(closing), tokio::time::Instant::now());
            tokio::select! {
                // The connection first: a drain that lands as the protocol became known must not
                // close the connection before hyper has read the request already sent.
                biased;
                _ = connection.as_mut() => return,
                () = stop.abort.cancelled() => return,
                // Dropped unanswered, whichever HTTP.
                () = refused.cancelled() => return,
                // Probe connections answer once and close anyway; they are what a drain still serves.
                () = stop.drain.cancelled(), if !closing && admission == Admission::Full => {
                    connection.as_mut().close_gracefully();
                    closing = true;
                }
                // One answer per probe connection, whichever HTTP (HTTP/1 closes by itself).
                () = answered.cancelled(), if !closing => {
                    connection.as_mut().close_gracefully();
                    closing = true;
                }
                () = tokio::time::sleep_until(wake) => match deadlines.due(seen(closing), tokio::time::Instant::now()) {
                    Due::Close => return,
                    Due::CloseGracefully => {
                        connection.as_mut().close_gracefully();
                        closing = true;
                    }
                    Due::Nothing => {}
                },
            }
        }
    }
}

/// A connection hyper can be asked to close once the requests in progress are answered.
trait Graceful {
    fn close_gracefully(self: Pin<&mut Self>);
}

impl<I, S, B> Graceful for http1::UpgradeableConnection<I, S>
where
    S: HttpService<Incoming, ResBody = B>,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: Body + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    fn close_gracefully(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S, B, E> Graceful for http2::Connection<I, S, E>
where
    S: HttpService<Incoming, ResBody = B>,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: Body + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
    E: Http2ServerConnExec<S::Future, B>,
{
    fn close_gracefully(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// An HTTP/2 connection behind a pointer (see where it is boxed).
trait SendConnection: Future<Output = hyper::Result<()>> + Graceful + Send {}

impl<C: Future<Output = hyper::Result<()>> + Graceful + Send> SendConnection for C {}

impl Graceful for Pin<Box<dyn SendConnection>> {
    fn close_gracefully(self: Pin<&mut Self>) {
        self.get_mut().as_mut().close_gracefully();
    }
}
