//! The open live sockets, as the server's shutdown sees them.
//!
//! An upgraded `/ws` connection leaves hyper (its HTTP exchange is over), so the connection drain
//! does not wait for it. On shutdown each socket is told to close with 1001 "going away" (a card
//! reconnects, to another replica behind a proxy) and the server waits for the close frames to be
//! written before it closes the database the sockets' actions are written to.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The tasks serving upgraded sockets, and the signal that asks them to close.
#[derive(Clone, Default)]
pub struct LiveSockets {
    closing: CancellationToken,
    open: TaskTracker,
}

impl LiveSockets {
    /// Serves one upgraded socket, counted until `serve` returns.
    pub(crate) fn spawn(&self, serve: impl Future<Output = ()> + Send + 'static) {
        drop(self.open.spawn(serve));
    }

    /// Resolves once the server asked its sockets to close.
    pub(crate) async fn closing(&self) {
        self.closing.cancelled().await
    }

    /// Asks every socket, open now or opened later, to close.
    pub fn close_all(&self) {
        self.closing.cancel();
        self.open.close();
    }

    /// Waits up to `patience` for the sockets to finish closing; answers how many had not.
    pub async fn closed_within(&self, patience: Duration) -> usize {
        self.close_all();
        match tokio::time::timeout(patience, self.open.wait()).await {
            Ok(()) => 0,
            Err(_) => self.open.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn closing_reaches_every_socket_and_waits_for_them() {
        let sockets = LiveSockets::default();
        for _ in 0..3 {
            let mine = sockets.clone();
            sockets.spawn(async move {
                mine.closing().await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            });
        }
        assert_eq!(sockets.closed_within(Duration::from_secs(5)).await, 0);
    }

    #[tokio::test]
    async fn a_socket_that_never_closes_is_counted_not_awaited() {
        let sockets = LiveSockets::default();
        sockets.spawn(std::future::pending());
        assert_eq!(sockets.closed_within(Duration::from_millis(50)).await, 1);
    }
}
