//! Credit reservations in memory, over the operator store's one mutex: a charge and its open
//! reservation, or a refund and the reservation's removal, happen together as in the SQL
//! adapter's transactions.

use chrono::{DateTime, Utc};
use svc_domain::credit_reservation::{CreditReservation, ReservationRefund, ReservedCharge};
use svc_domain::wallet::{Principal, WalletError};

use super::InMemoryOperatorStore;
use crate::ports::RepositoryError;
use crate::ports::credit_reservations::{CreditReservationRepository, RefundOutcome};
use crate::ports::operator::TransitionError;

#[async_trait::async_trait]
impl CreditReservationRepository for InMemoryOperatorStore {
    async fn open(
        &self,
        principal: &Principal,
        charge: ReservedCharge,
        now: DateTime<Utc>,
    ) -> Result<CreditReservation, TransitionError<WalletError>> {
        let mut state = self.state();
        let wallet = state.wallet_or_empty(principal, now);
        let (reservation, next, entry) =
            CreditReservation::open(&wallet, charge, now).map_err(TransitionError::Rejected)?;
        state.record_movement(next, entry);
        state
            .reservations
            .insert(reservation.transaction_id.clone(), reservation.clone());
        Ok(reservation)
    }

    async fn settle(&self, transaction_id: &str) -> Result<bool, RepositoryError> {
        Ok(self.state().reservations.remove(transaction_id).is_some())
    }

    async fn refund(
        &self,
        transaction_id: &str,
        refund: ReservationRefund,
        now: DateTime<Utc>,
    ) -> Result<RefundOutcome, TransitionError<WalletError>> {
        let mut state = self.state();
        let Some(reservation) = state.reservations.get(transaction_id).cloned() else {
            return Ok(RefundOutcome::NotOpen);
        };
        let wallet = state.wallets.get(&reservation.principal).cloned();
        let refunded = reservation
            .refund(wallet.as_ref(), refund, now)
            .map_err(TransitionError::Rejected)?;
        state.reservations.remove(transaction_id);
        let Some((next, entry)) = refunded else {
            return Ok(RefundOutcome::PayerGone);
        };
        state.record_movement(next, entry.clone());
        Ok(RefundOutcome::Refunded(entry))
    }

    async fn opened_before(
        &self,
        cutoff: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<CreditReservation>, RepositoryError> {
        let mut open: Vec<_> = self
            .state()
            .reservations
            .values()
            .filter(|r| r.opened_at < cutoff)
            .cloned()
            .collect();
        open.sort_by_key(|r| r.opened_at);
        open.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(open)
    }
}

impl InMemoryOperatorStore {
    /// The reservations still open, for assertions.
    pub fn open_reservations(&self) -> Vec<CreditReservation> {
        self.state().reservations.values().cloned().collect()
    }

    /// Deletes the principal's wallet, as removing its account or org by hand would.
    pub fn delete_wallet(&self, principal: &Principal) {
        self.state().wallets.remove(principal);
    }
}
