//! The sweep of expired console sessions: every replica deletes the rows past their expiry once
//! an hour, so sessions of browsers that never come back (and never sign in again, which also
//! sweeps) do not pile up in `console_sessions`.

use std::time::Duration;

use svc_application::services::console::ConsoleSessions;
use tokio_util::sync::CancellationToken;

/// How often the expired sessions are deleted. A session past its expiry is refused at once
/// whatever this is; the sweep only reclaims rows.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

pub struct ConsoleSweeper {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ConsoleSweeper {
    pub fn start(sessions: ConsoleSessions) -> Self {
        let stop = CancellationToken::new();
        let task = tokio::spawn(run(sessions, stop.clone()));
        Self { stop, task }
    }

    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn run(sessions: ConsoleSessions, stop: CancellationToken) {
    loop {
        if let Err(error) = sessions.sweep_expired().await {
            tracing::warn!(error = ?error, "expired console sessions could not be deleted; retrying later");
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(SWEEP_EVERY) => {}
        }
    }
}
