//! `/ws`: the live channel between a mounted card and the server (docs/live-channel.md).

mod connection;
mod frames;
pub mod http_source;
pub mod polling;
mod subscribe;
mod tool_channels;

use std::sync::Arc;

use poem::web::Data;
use poem::web::websocket::{WebSocket, WebSocketConfig};
use poem::{IntoResponse, Request, handler};

use crate::HttpState;

/// Largest frame a client may send; bigger ones get `FRAME_TOO_LARGE` and a 1009 close.
pub const MAX_FRAME_BYTES: usize = 256 * 1024;

#[handler]
pub async fn ws(req: &Request, socket: WebSocket, Data(state): Data<&Arc<HttpState>>) -> impl IntoResponse {
    let state = state.clone();
    let bearer = crate::mcp::bearer(req);
    // The transport refuses far-oversized messages before they are buffered; the connection
    // answers the ones just over the protocol limit with an error frame.
    let config = WebSocketConfig::default()
        .max_message_size(Some(4 * MAX_FRAME_BYTES))
        .max_frame_size(Some(4 * MAX_FRAME_BYTES));
    socket
        .config(config)
        .on_upgrade(move |stream| connection::serve(state, stream, bearer))
}
