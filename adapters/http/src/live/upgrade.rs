//! The `/ws` upgrade, done here rather than by poem's `WebSocket` extractor so that the socket is
//! tokio-tungstenite's own stream: its frames (and so its write buffer) are ours to size.
//!
//! tungstenite keeps the capacity its write buffer grew to for the socket's life; a card's `ack`
//! carries its compiled component (tens of KiB for a generated one), so every idle socket would
//! keep a buffer that large. [`text_frames`] sends a long text message as fragments instead (RFC
//! 6455 section 5.4; clients reassemble them), so the buffer never outgrows one fragment.

use poem::http::{HeaderValue, Method, StatusCode, header};
use poem::{FromRequest, IntoResponse, Request, RequestBody, Response};
use tokio_tungstenite::WebSocketStream;

use super::sockets::LiveSockets;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Bytes, Message, Utf8Bytes};

/// The live socket the connection serves.
pub type LiveSocket = WebSocketStream<poem::Upgraded>;

/// Largest frame the server writes; a longer text message goes out in fragments of this size.
pub const FRAGMENT_BYTES: usize = 2 * 1024;

/// A valid WebSocket upgrade request (RFC 6455 section 4.2.1), its connection not yet switched.
pub struct LiveUpgrade {
    key: HeaderValue,
    on_upgrade: poem::OnUpgrade,
}

/// Why a request is not a WebSocket upgrade: answered 400, as poem's extractor did.
#[derive(Debug, thiserror::Error)]
#[error("invalid protocol")]
pub struct NotAnUpgrade;

impl poem::error::ResponseError for NotAnUpgrade {
    fn status(&self) -> StatusCode {
        StatusCode::BAD_REQUEST
    }
}

impl<'a> FromRequest<'a> for LiveUpgrade {
    async fn from_request(req: &'a Request, _body: &mut RequestBody) -> poem::Result<Self> {
        let headers = req.headers();
        let upgrade_is_websocket = headers
            .get(header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
        let connection_upgrades = headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
        let version_13 = headers.get(header::SEC_WEBSOCKET_VERSION).is_some_and(|v| v == "13");
        let key = headers.get(header::SEC_WEBSOCKET_KEY).cloned();
        match key {
            Some(key) if req.method() == Method::GET && upgrade_is_websocket && connection_upgrades && version_13 => {
                Ok(Self {
                    key,
                    on_upgrade: req.take_upgrade()?,
                })
            }
            _ => Err(NotAnUpgrade.into()),
        }
    }
}

impl LiveUpgrade {
    /// Answers `101 Switching Protocols` and, once the connection switched, serves it with `serve`.
    /// The socket is served as one of `sockets`, so the server's shutdown closes and awaits it.
    pub fn on_upgrade<F, Fut>(self, config: WebSocketConfig, sockets: &LiveSockets, serve: F) -> Response
    where
        F: FnOnce(LiveSocket) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let accept = derive_accept_key(self.key.as_bytes());
        let on_upgrade = self.on_upgrade;
        sockets.spawn(async move {
            let Ok(upgraded) = on_upgrade.await else { return };
            let socket = WebSocketStream::from_raw_socket(upgraded, Role::Server, Some(config)).await;
            serve(socket).await;
        });
        Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::CONNECTION, "upgrade")
            .header(header::UPGRADE, "websocket")
            .header(header::SEC_WEBSOCKET_ACCEPT, accept)
            .finish()
            .into_response()
    }
}

/// A text message as the frames to write: itself when short, else a text frame and continuation
/// frames of at most [`FRAGMENT_BYTES`] each (a fragment may split a UTF-8 sequence; the message
/// as a whole is what must be valid). The fragments share the message's buffer.
pub fn text_frames(text: Utf8Bytes) -> Vec<Message> {
    if text.len() <= FRAGMENT_BYTES {
        return vec![Message::Text(text)];
    }
    let bytes = Bytes::from(text);
    let count = bytes.len().div_ceil(FRAGMENT_BYTES);
    (0..count)
        .map(|index| {
            let start = index * FRAGMENT_BYTES;
            let piece = bytes.slice(start..(start + FRAGMENT_BYTES).min(bytes.len()));
            let opcode = if index == 0 {
                OpCode::Data(Data::Text)
            } else {
                OpCode::Data(Data::Continue)
            };
            Message::Frame(Frame::message(piece, opcode, index + 1 == count))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payloads(frames: &[Message]) -> Vec<(bool, OpCode, Vec<u8>)> {
        frames
            .iter()
            .map(|m| match m {
                Message::Frame(f) => (f.header().is_final, f.header().opcode, f.payload().to_vec()),
                other => panic!("expected a raw frame, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_short_message_is_one_text_frame() {
        let frames = text_frames("x".repeat(FRAGMENT_BYTES).into());
        assert!(matches!(&frames[..], [Message::Text(t)] if t.len() == FRAGMENT_BYTES));
    }

    #[test]
    fn a_long_message_is_a_text_frame_then_continuations_that_join_to_it() {
        // Multi-byte characters, so some fragment boundary falls inside one.
        let text: String = "é€😀a".repeat(FRAGMENT_BYTES);
        let frames = payloads(&text_frames(text.clone().into()));
        assert!(frames.len() > 2);
        assert_eq!(frames[0].1, OpCode::Data(Data::Text));
        assert!(frames[1..].iter().all(|f| f.1 == OpCode::Data(Data::Continue)));
        let finals: Vec<bool> = frames.iter().map(|f| f.0).collect();
        assert_eq!(finals.iter().filter(|f| **f).count(), 1);
        assert!(
            finals.last().copied().unwrap_or(false),
            "only the last fragment is final"
        );
        assert!(frames.iter().all(|f| f.2.len() <= FRAGMENT_BYTES));
        let joined: Vec<u8> = frames.into_iter().flat_map(|f| f.2).collect();
        assert_eq!(String::from_utf8(joined).unwrap(), text);
    }
}
