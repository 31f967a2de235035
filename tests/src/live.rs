//! A WebSocket client for `/ws` tests (tokio-tungstenite).

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub struct LiveClient {
    pub socket: Socket,
}

impl LiveClient {
    pub async fn connect(base: &str) -> Self {
        let url = format!("{}/ws", base.replace("http://", "ws://"));
        let (socket, _) = tokio_tungstenite::connect_async(url).await.expect("websocket connects");
        Self { socket }
    }

    /// A socket whose upgrade request carries `Authorization: Bearer <bearer>`.
    pub async fn connect_with_bearer(base: &str, bearer: &str) -> Self {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = format!("{}/ws", base.replace("http://", "ws://"))
            .into_client_request()
            .expect("a websocket request");
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {bearer}").parse().expect("a header value"),
        );
        let (socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("websocket connects");
        Self { socket }
    }

    pub async fn send(&mut self, kind: &str, payload: Value) {
        self.send_raw(json!({ "type": kind, "payload": payload }).to_string())
            .await;
    }

    pub async fn send_raw(&mut self, text: String) {
        self.socket.send(Message::Text(text.into())).await.expect("send");
    }

    /// The next JSON frame within 5 s; protocol pings are skipped.
    pub async fn recv(&mut self) -> Value {
        self.try_recv(Duration::from_secs(5)).await.expect("a frame within 5 s")
    }

    /// [`LiveClient::next_or_why`] without the why.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        self.next_or_why(wait).await.ok()
    }

    /// The next frame of `kind`, failing on any other frame first.
    pub async fn expect(&mut self, kind: &str) -> Value {
        let frame = self.recv().await;
        assert_eq!(frame["type"], kind, "expected {kind}, got {frame}");
        frame["payload"].clone()
    }

    /// The next JSON frame (or `_closed`) within `wait`, or what came instead: a timeout, the
    /// end of the stream, or the socket's error. For assertions that should say why a frame
    /// did not come.
    pub async fn next_or_why(&mut self, wait: Duration) -> Result<Value, String> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let message = match tokio::time::timeout_at(deadline, self.socket.next()).await {
                Err(_) => return Err(format!("nothing within {wait:?}")),
                Ok(None) => return Err("the stream ended".to_owned()),
                Ok(Some(Err(error))) => return Err(format!("the socket failed: {error:?}")),
                Ok(Some(Ok(message))) => message,
            };
            match message {
                Message::Text(text) => return Ok(serde_json::from_str(&text).expect("JSON frame")),
                Message::Close(frame) => {
                    return Ok(json!({ "type": "_closed", "payload": frame.map(|f| u16::from(f.code)) }));
                }
                _ => continue,
            }
        }
    }

    /// Asserts no frame arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Some(frame) = self.try_recv(wait).await {
            panic!("expected no frame, got {frame}");
        }
    }
}
