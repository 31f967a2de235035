//! Renders answered as an event stream run in tasks of their own (`mcp/progress_stream.rs`), so
//! no connection owns them. At shutdown, once the grace period is over, the server ends the ones
//! still running, as a cancelled render ends (a hosted render's reserved charge is refunded), and
//! waits for them before the database closes.

use std::future::Future;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

#[derive(Clone, Default)]
pub struct StreamedRenders {
    tasks: TaskTracker,
    end: CancellationToken,
}

impl StreamedRenders {
    /// Runs `render` until it finishes or [`Self::end_all`] ends it.
    pub(crate) fn spawn(&self, render: impl Future<Output = ()> + Send + 'static) {
        let end = self.end.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                () = end.cancelled() => {}
                () = render => {}
            }
        });
    }

    /// Ends every render still running (its work is dropped) and waits until all have ended.
    pub async fn end_all(&self) {
        self.end.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}
