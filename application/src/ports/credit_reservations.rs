//! The port of durable credit reservations (hosted mode): a render's charge is stored open with
//! its `render_charge` row, so a process that dies mid-render leaves something to refund.

use chrono::{DateTime, Utc};
use svc_domain::credit_reservation::{CreditReservation, ReservationRefund, ReservedCharge};
use svc_domain::wallet::{LedgerEntry, Principal, WalletError};

use super::RepositoryError;
use super::operator::TransitionError;

#[async_trait::async_trait]
pub trait CreditReservationRepository: Send + Sync {
    /// In one transaction: reads the principal's wallet (opened empty if absent, locked), lets
    /// `CreditReservation::open` charge it, and writes the wallet, its `render_charge` row and
    /// the open reservation. A refused charge writes nothing.
    async fn open(
        &self,
        principal: &Principal,
        charge: ReservedCharge,
        now: DateTime<Utc>,
    ) -> Result<CreditReservation, TransitionError<WalletError>>;

    /// Deletes the open reservation: its charge stands. `false` when it was not open (refunded
    /// already).
    async fn settle(&self, transaction_id: &str) -> Result<bool, RepositoryError>;

    /// In one transaction: deletes the open reservation and writes its refund (the wallet and a
    /// `refund` row of the reserved amount), as `CreditReservation::refund` says: a wallet that
    /// is gone is not made again, and the reservation is closed with nothing written
    /// ([`RefundOutcome::PayerGone`]). [`RefundOutcome::NotOpen`] when it was not open: of racing
    /// refunds (two replicas, a cancelled render's and the sweep's), the one that deleted it
    /// refunds and the others write nothing.
    async fn refund(
        &self,
        transaction_id: &str,
        refund: ReservationRefund,
        now: DateTime<Utc>,
    ) -> Result<RefundOutcome, TransitionError<WalletError>>;

    /// Up to `limit` reservations still open that were opened before `cutoff`, oldest first.
    async fn opened_before(&self, cutoff: DateTime<Utc>, limit: u64)
    -> Result<Vec<CreditReservation>, RepositoryError>;
}

/// What [`CreditReservationRepository::refund`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    /// The reservation is closed and its `refund` row written.
    Refunded(LedgerEntry),
    /// It was not open (settled, or refunded by another caller): nothing written.
    NotOpen,
    /// It was open, but its payer's wallet is gone: the reservation is closed, nothing written.
    PayerGone,
}
