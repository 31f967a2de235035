//! Periodic sweeps every replica runs until shutdown: expired console sessions (rows of browsers
//! that never come back) and authorization codes that expired unredeemed (their keys are
//! revoked). Each is safe on every replica at once.

use std::time::Duration;

use svc_application::services::console::ConsoleSessions;
use svc_application::services::oauth::OAuthService;
use tokio_util::sync::CancellationToken;

/// How often the expired console sessions are deleted. A session past its expiry is refused at
/// once whatever this is; the sweep only reclaims rows.
const CONSOLE_SWEEP_EVERY: Duration = Duration::from_secs(3600);

pub struct Sweeps {
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Sweeps {
    /// Starts the console sweep, and the code sweep when the OAuth surface is on.
    pub fn start(console: ConsoleSessions, oauth: Option<OAuthService>) -> Self {
        let stop = CancellationToken::new();
        let mut tasks = vec![tokio::spawn(every(CONSOLE_SWEEP_EVERY, stop.clone(), move || {
            let console = console.clone();
            async move {
                if let Err(error) = console.sweep_expired().await {
                    tracing::warn!(error = ?error, "expired console sessions could not be deleted; retrying later");
                }
            }
        }))];
        if let Some(oauth) = oauth {
            let interval = oauth.code_sweep_interval();
            tasks.push(tokio::spawn(every(interval, stop.clone(), move || {
                let oauth = oauth.clone();
                async move {
                    match oauth.sweep_codes().await {
                        Ok(sweep) if sweep.revoked > 0 => {
                            tracing::info!(
                                revoked = sweep.revoked,
                                "revoked the keys of authorization codes that expired unredeemed"
                            );
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(error = %error, "the authorization code sweep failed; retrying later");
                        }
                    }
                }
            })));
        }
        Self { stop, tasks }
    }

    pub async fn stop(self) {
        self.stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Runs `sweep` now and then every `interval` until `stop`; a sweep under way finishes first.
async fn every<F, Fut>(interval: Duration, stop: CancellationToken, sweep: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    loop {
        sweep().await;
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}
