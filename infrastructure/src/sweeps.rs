//! Periodic sweeps every replica runs until shutdown: expired console sessions (rows of browsers
//! that never come back), authorization codes that expired unredeemed (their keys are revoked)
//! and, hosted, expired account tokens (verification and reset links never followed) and
//! abandoned credit reservations (charges of renders whose process died, refunded); and the
//! retention of sessions and their events, handshakes and invite links (`crate::retention`). Each is safe on every replica at
//! once.

use std::time::Duration;

use svc_application::services::accounts::AccountService;
use svc_application::services::console::ConsoleSessions;
use svc_application::services::hosted::CreditReservations;
use svc_application::services::oauth::OAuthService;
use tokio_util::sync::CancellationToken;

/// How often the expired console sessions are deleted. A session past its expiry is refused at
/// once whatever this is; the sweep only reclaims rows.
const CONSOLE_SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// How often the expired account tokens are deleted. An expired link is refused when used
/// whatever this is; the sweep only reclaims rows.
const ACCOUNT_TOKEN_SWEEP_EVERY: Duration = Duration::from_secs(3600);

pub struct Sweeps {
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Sweeps {
    /// Starts the console sweep, the code sweep when the OAuth surface is on, and the account
    /// token sweep when accounts are (hosted).
    pub fn start(console: ConsoleSessions, oauth: Option<OAuthService>, accounts: Option<AccountService>) -> Self {
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
                        Ok(sweep) if sweep.revoked > 0 || sweep.clients_forgotten > 0 => {
                            tracing::info!(
                                revoked = sweep.revoked,
                                clients_deleted = sweep.clients_forgotten,
                                "revoked the keys of authorization codes that expired unredeemed; deleted unused registered clients"
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
        if let Some(accounts) = accounts {
            tasks.push(tokio::spawn(every(ACCOUNT_TOKEN_SWEEP_EVERY, stop.clone(), move || {
                let accounts = accounts.clone();
                async move {
                    match accounts.sweep_expired_tokens().await {
                        Ok(deleted) if deleted > 0 => tracing::info!(deleted, "deleted expired account tokens"),
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(error = ?error, "expired account tokens could not be deleted; retrying later");
                        }
                    }
                }
            })));
        }
        Self { stop, tasks }
    }

    /// Adds the sweep of abandoned credit reservations (hosted): it refunds the charges of
    /// renders whose process died, at start-up and every `sweep_interval`. Replicas race for each
    /// reservation, and the one that deletes it refunds it.
    pub fn refunding_abandoned_reservations(mut self, reservations: Option<CreditReservations>) -> Self {
        let Some(reservations) = reservations else {
            return self;
        };
        let interval = reservations.sweep_interval();
        self.tasks
            .push(tokio::spawn(every(interval, self.stop.clone(), move || {
                let reservations = reservations.clone();
                async move {
                    match reservations.refund_abandoned().await {
                        Ok(sweep) if sweep.refunded > 0 => tracing::warn!(
                            refunded = sweep.refunded,
                            "refunded the charges of renders interrupted by a server that stopped mid-render"
                        ),
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(error = %error, "the abandoned reservation sweep failed; retrying later");
                        }
                    }
                }
            })));
        self
    }

    /// Adds the retention sweep: sessions past their grace deleted with everything stored under
    /// them, every session's deliveries and drained gestures trimmed to what a replay serves, and
    /// handshakes, ended org invites and their links past their grace deleted, at start-up and
    /// every interval. Replicas racing delete each row once between them. A sweep under way stops
    /// at shutdown (each of its writes commits alone, so none is half done).
    pub fn reclaiming_session_storage(mut self, retention: crate::retention::SessionRetention) -> Self {
        let crate::retention::SessionRetention { service, interval } = retention;
        let stop = self.stop.clone();
        self.tasks
            .push(tokio::spawn(every(interval, self.stop.clone(), move || {
                let (service, stop) = (service.clone(), stop.clone());
                async move {
                    let swept = tokio::select! {
                        () = stop.cancelled() => return,
                        swept = service.sweep() => swept,
                    };
                    match swept {
                        Ok(sweep) if sweep.deleted_anything() || sweep.sessions_reindexed > 0 => tracing::info!(
                            sessions = sweep.sessions_deleted,
                            sessions_reindexed = sweep.sessions_reindexed,
                            deliveries = sweep.deliveries_trimmed,
                            gestures = sweep.gestures_trimmed,
                            handshakes = sweep.handshakes_deleted,
                            invites = sweep.invites_deleted,
                            invite_links = sweep.invite_links_deleted,
                            "deleted sessions, handshakes, invites and invite links past their grace and events no replay serves"
                        ),
                        Ok(_) => {}
                        Err(error) => tracing::warn!(error = %error, "the retention sweep failed; retrying later"),
                    }
                }
            })));
        self
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
