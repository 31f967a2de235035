//! Durable reservations of render charges (hosted mode).
//!
//! A cold render's charge is stored as an open reservation in the transaction that writes its
//! `render_charge` row, so a process killed mid-render (SIGKILL, OOM, power) does not take the
//! payer's money with it: every replica sweeps the reservations open longer than any render can
//! run (twice the render deadline) and refunds them. Settling and refunding delete the
//! reservation, and only the caller that deleted it refunds, so a charge is refunded at most once
//! whoever races for it.

use std::sync::Arc;
use std::time::Duration;

use svc_domain::credit_reservation::{CreditReservation, RenderDeadline, ReservationRefund, ReservedCharge};
use svc_domain::wallet::{LedgerEntry, Principal, WalletError};

use crate::ports::credit_reservations::{CreditReservationRepository, RefundOutcome};
use crate::ports::operator::TransitionError;
use crate::ports::{Clock, Ids, RepositoryError};

/// The ledger reason of a reservation refunded by the sweep: its render's process died.
pub const INTERRUPTED_REASON: &str = "refund: the render was interrupted";

/// Reservations refunded per listing of the sweep.
const SWEEP_BATCH: u64 = 100;

/// The longest wait between two sweeps, whatever the deadline.
const LONGEST_SWEEP_INTERVAL: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum ReservationError {
    #[error(transparent)]
    Wallet(#[from] WalletError),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl From<TransitionError<WalletError>> for ReservationError {
    fn from(error: TransitionError<WalletError>) -> Self {
        match error {
            TransitionError::Rejected(error) => Self::Wallet(error),
            TransitionError::Repository(error) => Self::Storage(error),
        }
    }
}

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepOutcome {
    /// Abandoned reservations this sweep refunded.
    pub refunded: usize,
    /// Ones it could not (logged; the next sweep tries again).
    pub failed: usize,
}

#[derive(Clone)]
pub struct CreditReservations {
    repository: Arc<dyn CreditReservationRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    deadline: RenderDeadline,
}

impl CreditReservations {
    pub fn new(
        repository: Arc<dyn CreditReservationRepository>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        deadline: RenderDeadline,
    ) -> Self {
        Self {
            repository,
            clock,
            ids,
            deadline,
        }
    }

    /// The longest a render holds its reservation.
    pub fn deadline(&self) -> RenderDeadline {
        self.deadline
    }

    /// How often each replica sweeps: a quarter of the time to abandonment (half the deadline),
    /// at most five minutes, so an abandoned reservation is refunded soon after it is one.
    pub fn sweep_interval(&self) -> Duration {
        (self.deadline.abandoned_after() / 4).clamp(Duration::from_secs(1), LONGEST_SWEEP_INTERVAL)
    }

    /// Charges `principal` for a render of `session_id`, or refuses (`insufficient_credit`).
    pub async fn open(
        &self,
        principal: &Principal,
        amount_cents: i64,
        reason: String,
        session_id: &str,
    ) -> Result<CreditReservation, ReservationError> {
        let charge = ReservedCharge {
            transaction_id: self.ids.ulid(),
            amount_cents,
            reason,
            related_session_id: Some(session_id.to_owned()),
        };
        Ok(self.repository.open(principal, charge, self.clock.now()).await?)
    }

    /// The charge stands. `false` when the reservation was refunded already.
    pub async fn settle(&self, transaction_id: &str) -> Result<bool, RepositoryError> {
        self.repository.settle(transaction_id).await
    }

    /// Gives the charge back with `reason`; `None` when it was refunded (or settled) already, or
    /// when its payer's wallet is gone (then the refund is dropped with a warning: see
    /// `CreditReservation::refund`).
    pub async fn refund(&self, transaction_id: &str, reason: &str) -> Result<Option<LedgerEntry>, ReservationError> {
        let refund = ReservationRefund {
            transaction_id: self.ids.ulid(),
            reason: reason.to_owned(),
        };
        match self.repository.refund(transaction_id, refund, self.clock.now()).await? {
            RefundOutcome::Refunded(entry) => Ok(Some(entry)),
            RefundOutcome::NotOpen => Ok(None),
            RefundOutcome::PayerGone => {
                tracing::warn!(
                    reservation = %transaction_id,
                    "a reserved charge was not refunded: its payer's wallet was deleted; no wallet is made for it"
                );
                Ok(None)
            }
        }
    }

    /// Refunds every abandoned reservation: one still open twice the render deadline after its
    /// charge, whose render died with its process. Safe on every replica at once: each
    /// reservation is refunded by whichever deletes it.
    pub async fn refund_abandoned(&self) -> Result<SweepOutcome, RepositoryError> {
        let cutoff = self.deadline.abandoned_before(self.clock.now());
        let mut outcome = SweepOutcome::default();
        loop {
            let batch = self.repository.opened_before(cutoff, SWEEP_BATCH).await?;
            let mut progressed = false;
            for reservation in &batch {
                match self.refund(&reservation.transaction_id, INTERRUPTED_REASON).await {
                    Ok(Some(_)) => {
                        outcome.refunded += 1;
                        progressed = true;
                    }
                    // Another replica (or the render itself, at last) took it first.
                    Ok(None) => progressed = true,
                    Err(error) => {
                        outcome.failed += 1;
                        tracing::error!(
                            error = %error,
                            reservation = %reservation.transaction_id,
                            payer = %reservation.principal.principal_id,
                            cents = reservation.amount_cents,
                            "an abandoned reservation could not be refunded; the next sweep tries again"
                        );
                    }
                }
            }
            // A listing that failed whole would come back the same: leave it to the next sweep.
            if batch.len() < SWEEP_BATCH as usize || !progressed {
                return Ok(outcome);
            }
        }
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use chrono::TimeDelta;
    use svc_domain::wallet::TransactionKind;

    use super::*;
    use crate::testing::OperatorFakes;

    fn user() -> Principal {
        Principal::user("u1")
    }

    async fn funded(fakes: &OperatorFakes, cents: i64) {
        fakes
            .credit_service()
            .grant(crate::services::operator::GrantCredit {
                principal: user(),
                kind: crate::services::operator::GrantKind::Topup,
                amount_cents: cents,
                reason: "topup".into(),
            })
            .await
            .unwrap();
    }

    fn ledger(fakes: &OperatorFakes) -> Vec<(TransactionKind, i64, String)> {
        fakes
            .store
            .ledger_of(&user())
            .into_iter()
            .map(|e| (e.kind, e.delta_cents, e.reason))
            .collect()
    }

    #[tokio::test]
    async fn the_sweep_refunds_only_reservations_open_twice_the_deadline_and_each_once() {
        let fakes = OperatorFakes::new();
        let reservations = fakes.credit_reservations(Duration::from_secs(60));
        funded(&fakes, 100).await;
        let old = reservations.open(&user(), 10, "render: a".into(), "s1").await.unwrap();
        let settled = reservations.open(&user(), 20, "render: b".into(), "s2").await.unwrap();
        fakes.clock.advance(TimeDelta::seconds(60));
        let young = reservations.open(&user(), 30, "render: c".into(), "s3").await.unwrap();
        assert!(reservations.settle(&settled.transaction_id).await.unwrap());

        fakes.clock.advance(TimeDelta::seconds(60));
        assert_eq!(
            reservations.refund_abandoned().await.unwrap(),
            SweepOutcome::default(),
            "two minutes after the first charge nothing is abandoned yet"
        );
        fakes.clock.advance(TimeDelta::seconds(1));
        let first = reservations.refund_abandoned().await.unwrap();
        assert_eq!(first.refunded, 1, "only the one opened over two minutes ago");
        assert_eq!(reservations.refund_abandoned().await.unwrap().refunded, 0, "and once");
        let last = ledger(&fakes).pop().unwrap();
        assert_eq!(last, (TransactionKind::Refund, 10, INTERRUPTED_REASON.to_owned()));

        assert!(
            !reservations.settle(&old.transaction_id).await.unwrap(),
            "the render of a swept reservation finds it gone"
        );
        assert!(
            reservations
                .refund(&young.transaction_id, "failed")
                .await
                .unwrap()
                .is_some()
        );
        assert_eq!(
            fakes.store.wallet(&user()).unwrap().balance_cents,
            80,
            "only b's charge stands"
        );
    }

    /// A payer whose wallet was deleted while its render ran (its account or org removed): the
    /// reservation is closed, no wallet is made to pay the refund into, and the sweep moves on.
    #[tokio::test]
    async fn a_refund_to_a_deleted_wallet_closes_the_reservation_and_makes_no_wallet() {
        let fakes = OperatorFakes::new();
        let reservations = fakes.credit_reservations(Duration::from_secs(60));
        funded(&fakes, 100).await;
        let opened = reservations.open(&user(), 10, "render: a".into(), "s1").await.unwrap();
        fakes.store.delete_wallet(&user());

        fakes.clock.advance(TimeDelta::seconds(121));
        let swept = reservations.refund_abandoned().await.unwrap();
        assert_eq!(swept, SweepOutcome::default(), "nothing refunded, nothing failed");
        assert!(
            fakes.store.open_reservations().is_empty(),
            "closed, not left for the next sweep"
        );
        assert_eq!(fakes.store.wallet(&user()), None, "no wallet made for the refund");
        assert_eq!(
            reservations.refund(&opened.transaction_id, "failed").await.unwrap(),
            None,
            "closed once"
        );
    }

    #[test]
    fn the_sweep_runs_four_times_per_abandonment_period_at_most_every_five_minutes() {
        let fakes = OperatorFakes::new();
        for (deadline, interval) in [(1, 1), (2, 1), (10, 5), (600, 300), (3_000, 300)] {
            let reservations = fakes.credit_reservations(Duration::from_secs(deadline));
            assert_eq!(
                reservations.sweep_interval(),
                Duration::from_secs(interval),
                "{deadline}"
            );
        }
    }
}
