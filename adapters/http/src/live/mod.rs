//! `/ws`: the live channel between a mounted card and the server (docs/live-channel.md).

mod actions;
mod connection;
pub mod flood_gate;
mod frames;
pub mod http_source;
mod inbound_budget;
mod key_watch;
mod poll_answer;
mod poll_body;
pub mod polling;
pub mod polling_gates;
pub(crate) mod replay_budget;
mod replay_pieces;
mod socket_writes;
pub mod sockets;
mod subscribe;
pub mod timings;
mod tool_channels;
mod upgrade;
mod wake_gate;

use std::sync::Arc;

use poem::web::Data;
use poem::{IntoResponse, Request, handler};
use svc_application::ports::agent::{LiveEvent, Published};
use svc_application::services::auth::AuthService;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

pub(crate) use key_watch::KeyWatch;
use sockets::LiveSockets;

use crate::route_states::LiveRoutes;

/// Whether a live credential's key may still be used: tokens minted without a key (development
/// mode) always may; a revoked, expired or deleted key's tokens no longer do. A failed lookup
/// refuses (the card reconnects and asks again).
pub(crate) async fn key_still_live(state: &LiveRoutes, key_id: Option<&str>) -> bool {
    let Some(key_id) = key_id else { return true };
    match state.auth.key_is_live(key_id).await {
        Ok(live) => live,
        Err(e) => {
            tracing::warn!(error = %e, "could not check a live token's key");
            false
        }
    }
}

/// Whether a bound socket's key has stopped authenticating, as the periodic sweep sees it
/// (`key_watch`). A store that cannot answer now, or within [`KEY_CHECK_PATIENCE`], is asked
/// again at the next sweep: a database blip must not end every card's channel.
async fn key_no_longer_live(auth: &AuthService, key_id: &str) -> bool {
    match tokio::time::timeout(KEY_CHECK_PATIENCE, auth.key_is_live(key_id)).await {
        Ok(Ok(live)) => !live,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not check a live socket's key; checking again later");
            false
        }
        Err(_) => {
            tracing::warn!("a live socket's key check took too long; checking again later");
            false
        }
    }
}

/// The replica's key watch: asks [`key_no_longer_live`] about each key of a bound socket every
/// `every`, until `sockets` close.
pub(crate) fn key_watch(auth: AuthService, every: std::time::Duration, sockets: LiveSockets) -> key_watch::KeyWatch {
    let check: key_watch::KeyCheck = Arc::new(move |key_id: String| {
        let auth = auth.clone();
        Box::pin(async move { key_no_longer_live(&auth, &key_id).await })
    });
    key_watch::KeyWatch::new(every, check, sockets)
}

/// How long the sweep waits for one key's check.
const KEY_CHECK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Resolves when the key's topic announces its revocation; never without a key.
pub(crate) async fn revoked(revocation: Option<&mut Receiver<Published>>) {
    let Some(revocation) = revocation else {
        return std::future::pending().await;
    };
    loop {
        match revocation.recv().await {
            Ok(published) if matches!(published.event(), LiveEvent::KeyRevoked { .. }) => return,
            Ok(_) => {}
            // A lagged receiver may have missed the announcement: end the channel to be safe.
            Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => return std::future::pending().await,
        }
    }
}

/// Largest frame a client may send; bigger ones get `FRAME_TOO_LARGE` and a 1009 close.
pub const MAX_FRAME_BYTES: usize = 256 * 1024;
/// Initial read buffer of a socket (see BENCHMARKS.md, memory per idle socket): inbound frames
/// are small (subscribe, action, ping); a larger one grows it.
const READ_BUFFER_BYTES: usize = 4 * 1024;

#[handler]
pub async fn ws(req: &Request, socket: upgrade::LiveUpgrade, Data(state): Data<&Arc<LiveRoutes>>) -> impl IntoResponse {
    let state = state.clone();
    let bearer = crate::mcp::bearer(req);
    // The transport refuses far-oversized messages before they are buffered; the connection
    // answers the ones just over the protocol limit with an error frame.
    // tungstenite allocates its read buffer up front (128 KiB by default); live frames are small,
    // and the buffer grows for a large one, so an idle card costs a few KiB instead.
    // Frames are written out at once (no 128 KiB write threshold): a fan-out frame reaches the
    // socket when it is sent, and the write buffer holds at most the fragment not yet written
    // (long messages go out in fragments, see `upgrade`).
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(0)
        .max_message_size(Some(4 * MAX_FRAME_BYTES))
        .max_frame_size(Some(4 * MAX_FRAME_BYTES));
    let sockets = state.sockets.clone();
    socket.on_upgrade(config, &sockets, move |stream| connection::serve(state, stream, bearer))
}
