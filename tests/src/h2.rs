//! An HTTP/2 client without TLS (prior knowledge), for what reqwest here cannot do: many
//! requests in flight on one connection, and requests that carry `:authority` and no `Host`.

use std::convert::Infallible;

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;

/// One HTTP/2 connection; clones are streams on it.
pub type Connection = SendRequest<Full<Bytes>>;

/// Opens a connection to `base` (`http://host:port`).
pub async fn connect(base: &str) -> Connection {
    let address = base.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

/// Opens a connection to `base` that never opens a window for the server's response bodies (a
/// client that reads nothing): heads arrive, bodies stay with the server. Aborting the returned
/// task closes the connection.
pub async fn connect_without_window(base: &str) -> (Connection, tokio::task::JoinHandle<()>) {
    connect_with_window(base, 0).await
}

/// Opens a connection to `base` whose streams open a window of `window` bytes for the server's
/// response bodies, and grant it again only as the body is read: a client that reads a body
/// slowly has it trickle to it `window` bytes at a time. Aborting the returned task closes the
/// connection.
pub async fn connect_with_window(base: &str, window: u32) -> (Connection, tokio::task::JoinHandle<()>) {
    let address = base.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(window)
        .handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    (sender, task)
}

/// GETs `url` on `connection`; the response, its body unread.
pub async fn get(mut connection: Connection, url: &str) -> Result<hyper::Response<hyper::body::Incoming>, String> {
    connection.ready().await.map_err(|e| e.to_string())?;
    let request = hyper::Request::get(url)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    connection.send_request(request).await.map_err(|e| e.to_string())
}

/// POSTs `body` as JSON to `url` (whose authority is sent as `:authority`) with a bearer;
/// the status and the body's text.
pub async fn post_json(
    mut connection: Connection,
    url: &str,
    bearer: &str,
    body: &Value,
) -> Result<(hyper::StatusCode, String), String> {
    connection.ready().await.map_err(|e| e.to_string())?;
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {bearer}"))
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| e.to_string())?;
    let response = connection.send_request(request).await.map_err(|e| e.to_string())?;
    status_and_text(response).await
}

/// A response's status and its body as text.
async fn status_and_text(
    response: hyper::Response<hyper::body::Incoming>,
) -> Result<(hyper::StatusCode, String), String> {
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// POSTs `size` bytes of spaces to `url` on a connection of its own, streamed in 8 KiB frames
/// with no `content-length` (nothing the server can check before reading); the status and the
/// body's text.
pub async fn post_unsized(url: &str, content_type: &str, size: usize) -> Result<(hyper::StatusCode, String), String> {
    let frames = (0..size.div_ceil(8192)).map(|_| Ok::<_, Infallible>(Frame::data(Bytes::from(vec![b' '; 8192]))));
    post_streamed(url, content_type, stream::iter(frames)).await
}

/// POSTs `first` to `url` on a connection of its own, with no `content-length`, then sends nothing
/// more and keeps the stream open (a client that stalls mid-body); the status and the body's text.
pub async fn post_stalled(
    url: &str,
    content_type: &str,
    first: &'static [u8],
) -> Result<(hyper::StatusCode, String), String> {
    let frames = stream::iter([Ok::<_, Infallible>(Frame::data(Bytes::from_static(first)))]).chain(stream::pending());
    post_streamed(url, content_type, frames).await
}

/// POSTs the body `frames` make to `url` on a connection of its own; the status and the body's text.
async fn post_streamed<S>(url: &str, content_type: &str, frames: S) -> Result<(hyper::StatusCode, String), String>
where
    S: futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + Unpin + 'static,
{
    let authority = url.trim_start_matches("http://").split('/').next().unwrap_or_default();
    let socket = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(socket))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let request = hyper::Request::post(url)
        .header("content-type", content_type)
        .body(StreamBody::new(frames))
        .map_err(|e| e.to_string())?;
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    status_and_text(response).await
}
