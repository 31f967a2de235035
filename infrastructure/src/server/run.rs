//! Serving and the shutdown sequence: the drain and its grace period, then what must end before
//! the database closes (streamed renders and their refunds, reset requests answered before their
//! work, live sockets, the bus, the mail worker, the sweeps).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::Application;

/// How long in-flight requests may take to finish after a shutdown signal.
const GRACE_PERIOD: Duration = Duration::from_secs(10);
/// How long the refunds of renders ended at shutdown get to be written.
const REFUNDS_PATIENCE: Duration = Duration::from_secs(5);
/// How long the accounts' background work (reset links being queued) gets to finish.
const ACCOUNT_WORK_PATIENCE: Duration = Duration::from_secs(5);
/// How long the live sockets get to write their close frame once the drain is over.
const LIVE_CLOSE_PATIENCE: Duration = Duration::from_secs(2);
/// Closing the database after the grace period: a pool that cannot close by then is left behind.
const DATABASE_CLOSE_TIMEOUT: Duration = Duration::from_secs(3);

impl Application {
    /// Serves until `shutdown` resolves, lets in-flight requests finish, then closes the database.
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let sweeps = crate::sweeps::Sweeps::start(self.console_sweep, self.code_sweep, self.accounts.clone())
            .refunding_abandoned_reservations(self.generation_account.as_ref().map(|a| a.reservations().clone()))
            .reclaiming_session_storage(self.retention);
        let live_sockets = self.live_sockets.clone();
        let held_requests = self.held_requests.clone();
        let claim_lost = Arc::new(AtomicBool::new(false));
        let lost = self.database_claim.as_ref().map(|claim| claim.lost());
        let noted_lost = claim_lost.clone();
        // Live sockets close as the drain starts, not after it: their cards reconnect at once.
        let shutdown = async move {
            let lost = async move {
                match lost {
                    Some(lost) => lost.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = shutdown => {}
                () = lost => noted_lost.store(true, Ordering::SeqCst),
            }
            live_sockets.close_all();
            // Long-polls answer now (nothing new) rather than be cut off when the grace ends.
            held_requests.release_all();
        };
        let served = crate::connections::serve(
            self.acceptor,
            self.endpoint,
            self.limits,
            crate::connections::Probes::SERVER,
            shutdown,
            GRACE_PERIOD,
            self.draining,
        )
        .await;
        // Past the grace period: renders still streaming end as cancelled ones do, and the
        // refunds of every render ended so (their reserved charges) are written before the
        // database closes.
        self.streamed_renders.end_all().await;
        if let Some(account) = &self.generation_account
            && tokio::time::timeout(REFUNDS_PATIENCE, account.background_refunds_written())
                .await
                .is_err()
        {
            tracing::error!(
                "refunds of ended renders were still being written when the database closed; their reservations stay open and a sweep refunds them"
            );
        }
        if let Some(accounts) = &self.accounts
            && tokio::time::timeout(ACCOUNT_WORK_PATIENCE, accounts.background_work_finished())
                .await
                .is_err()
        {
            tracing::error!("reset links of answered requests were still being queued when the database closed");
        }
        let left = self.live_sockets.closed_within(LIVE_CLOSE_PATIENCE).await;
        if left > 0 {
            tracing::warn!(left, "live sockets still open after shutdown asked them to close");
        }
        if let Some(tasks) = self.bus_tasks {
            tasks.stop().await;
        }
        if let Some(watch) = self.session_watch {
            watch.stop().await;
        }
        if let Some(worker) = self.mail_worker {
            worker.stop().await;
        }
        sweeps.stop().await;
        match tokio::time::timeout(DATABASE_CLOSE_TIMEOUT, self.db.close()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "closing the database failed"),
            Err(_) => tracing::warn!("the database did not close in time; exiting anyway"),
        }
        drop(self.database_claim);
        drop(self.sole_server);
        if claim_lost.load(Ordering::SeqCst) {
            return Err(std::io::Error::other(
                "this server lost its claim on the database (see the log) and stopped",
            ));
        }
        served
    }
}
