//! A credit reservation: the charge of a cold render, held open until the render settles it (a
//! component was produced: the charge stands) or refunds it (nothing was produced).
//!
//! The reservation is stored with its `render_charge` row, so it outlives the process that took
//! it. A process killed mid-render (SIGKILL, OOM, power) settles and refunds nothing; its
//! reservations stay open, and one open longer than any render can run belongs to such a render:
//! it is abandoned, and refunded by a sweep.
//!
//! | state | event | next | ledger |
//! |---|---|---|---|
//! | (none) | `open` with balance for the price | open | `render_charge -price` |
//! | (none) | `open` without | (none) | nothing (`insufficient_credit`) |
//! | open | settle | (gone) | nothing: the charge stands |
//! | open | refund (render failed, cancelled, overran, or abandoned) | (gone) | `refund +price` |
//! | open | refund, the payer's wallet deleted meanwhile | (gone) | nothing: no wallet is made for it |
//! | (gone) | settle or refund | (gone) | nothing |
//!
//! The store makes the last row hold: settling and refunding delete the reservation, and only the
//! caller that deleted it writes the refund.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::wallet::{LedgerEntry, Principal, TransactionKind, Wallet, WalletError, WalletMovement};

/// What a render is charged for its generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservedCharge {
    /// The transaction id of the `render_charge` row, which names the reservation too.
    pub transaction_id: String,
    pub amount_cents: i64,
    pub reason: String,
    /// The render's session.
    pub related_session_id: Option<String>,
}

/// An open reservation: a render's charge, not yet settled or refunded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditReservation {
    /// The transaction id of its `render_charge` row.
    pub transaction_id: String,
    pub principal: Principal,
    pub amount_cents: i64,
    pub related_session_id: Option<String>,
    pub opened_at: DateTime<Utc>,
}

/// The refund's own ledger row: its id and the reason the ledger shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationRefund {
    pub transaction_id: String,
    pub reason: String,
}

impl CreditReservation {
    /// Charges `wallet` for a render: the open reservation, the wallet after the charge and its
    /// `render_charge` row. Refused as the charge is (`insufficient_credit`, `invalid_amount`).
    pub fn open(
        wallet: &Wallet,
        charge: ReservedCharge,
        now: DateTime<Utc>,
    ) -> Result<(Self, Wallet, LedgerEntry), WalletError> {
        let movement = WalletMovement {
            transaction_id: charge.transaction_id.clone(),
            kind: TransactionKind::RenderCharge,
            amount_cents: charge.amount_cents,
            reason: charge.reason,
            related_session_id: charge.related_session_id.clone(),
        };
        let (next, entry) = wallet.apply(movement, now)?;
        let reservation = Self {
            transaction_id: charge.transaction_id,
            principal: wallet.principal.clone(),
            amount_cents: charge.amount_cents,
            related_session_id: charge.related_session_id,
            opened_at: now,
        };
        Ok((reservation, next, entry))
    }

    /// Gives the whole charge back to `wallet` (the reservation's principal's): the wallet after
    /// and its `refund` row, tied to the render's session. `None` when the wallet is gone (its
    /// account or org was deleted while the render ran): the refund is dropped, not paid into a
    /// wallet made for it, which would bring back a deleted payer's books holding credit no one
    /// can use.
    pub fn refund(
        &self,
        wallet: Option<&Wallet>,
        refund: ReservationRefund,
        now: DateTime<Utc>,
    ) -> Result<Option<(Wallet, LedgerEntry)>, WalletError> {
        let Some(wallet) = wallet else {
            return Ok(None);
        };
        let movement = WalletMovement {
            transaction_id: refund.transaction_id,
            kind: TransactionKind::Refund,
            amount_cents: self.amount_cents,
            reason: refund.reason,
            related_session_id: self.related_session_id.clone(),
        };
        wallet.apply(movement, now).map(Some)
    }

    /// Whether no render can still hold it at `now`: it was opened more than
    /// [`RenderDeadline::abandoned_after`] ago.
    pub fn abandoned(&self, now: DateTime<Utc>, deadline: RenderDeadline) -> bool {
        self.opened_at < deadline.abandoned_before(now)
    }
}

/// The longest a cold render holds its reservation: from its charge to its component stored.
/// The render is ended (failed and refunded) when it passes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderDeadline(Duration);

impl RenderDeadline {
    /// The longest deadline kept: past it a render's end, and a crashed one's refund, would be
    /// out of anyone's sight (and an instant that far ahead could overflow).
    pub const LONGEST: Duration = Duration::from_secs(30 * 24 * 3600);

    /// At least a second (a deadline of nothing would fail every render), at most
    /// [`RenderDeadline::LONGEST`].
    pub fn new(deadline: Duration) -> Self {
        Self(deadline.clamp(Duration::from_secs(1), Self::LONGEST))
    }

    pub fn get(self) -> Duration {
        self.0
    }

    /// How long after its charge an open reservation is abandoned: twice the deadline. The
    /// second deadline is the margin for what follows the render's own end (its refund's write,
    /// a slow database) and for the clocks of replicas that disagree.
    pub fn abandoned_after(self) -> Duration {
        self.0.saturating_mul(2)
    }

    /// Reservations opened before this instant are abandoned at `now`.
    pub fn abandoned_before(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let margin = TimeDelta::from_std(self.abandoned_after()).unwrap_or(TimeDelta::MAX);
        now.checked_sub_signed(margin).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
    }

    fn wallet(balance: i64, spent: i64) -> Wallet {
        Wallet {
            principal: Principal::org("o1"),
            balance_cents: balance,
            lifetime_granted_cents: balance + spent,
            lifetime_spent_cents: spent,
            updated_at: at(0),
        }
    }

    fn charge(amount: i64) -> ReservedCharge {
        ReservedCharge {
            transaction_id: "charge1".into(),
            amount_cents: amount,
            reason: "render: builtin".into(),
            related_session_id: Some("s1".into()),
        }
    }

    fn refund() -> ReservationRefund {
        ReservationRefund {
            transaction_id: "refund1".into(),
            reason: "refund: the render was interrupted".into(),
        }
    }

    #[test]
    fn opening_charges_the_wallet_and_refunding_gives_the_whole_charge_back() {
        // (balance, price, expected balance after the charge, or the refusal's code)
        let rows: [(i64, i64, Result<i64, &str>); 4] = [
            (10, 4, Ok(6)),
            (10, 10, Ok(0)),
            (10, 11, Err("insufficient_credit")),
            (10, 0, Err("invalid_amount")),
        ];
        for (balance, price, expected) in rows {
            let before = wallet(balance, 0);
            match (CreditReservation::open(&before, charge(price), at(1)), expected) {
                (Ok((reservation, charged, entry)), Ok(after)) => {
                    assert_eq!(charged.balance_cents, after, "{balance} {price}");
                    assert_eq!((entry.kind, entry.delta_cents), (TransactionKind::RenderCharge, -price));
                    assert_eq!(entry.transaction_id, reservation.transaction_id);
                    assert_eq!(
                        (&reservation.principal, reservation.amount_cents, reservation.opened_at),
                        (&before.principal, price, at(1))
                    );
                    let (refunded, entry) = reservation.refund(Some(&charged), refund(), at(2)).unwrap().unwrap();
                    assert_eq!(refunded.balance_cents, balance, "the whole charge comes back");
                    assert_eq!(refunded.lifetime_spent_cents, 0);
                    assert_eq!((entry.kind, entry.delta_cents), (TransactionKind::Refund, price));
                    assert_eq!(entry.related_session_id.as_deref(), Some("s1"));
                    assert_eq!(entry.reason, "refund: the render was interrupted");
                    assert!(refunded.invariant_holds());
                }
                (Err(error), Err(code)) => assert_eq!(error.code(), code, "{balance} {price}"),
                (got, want) => panic!("{balance} {price}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_refund_to_a_wallet_that_is_gone_is_dropped() {
        let (reservation, _, _) = CreditReservation::open(&wallet(10, 0), charge(5), at(0)).unwrap();
        assert_eq!(reservation.refund(None, refund(), at(1)), Ok(None));
    }

    #[test]
    fn a_reservation_is_abandoned_once_twice_the_deadline_has_passed() {
        let deadline = RenderDeadline::new(Duration::from_secs(10));
        let (reservation, _, _) = CreditReservation::open(&wallet(10, 0), charge(5), at(0)).unwrap();
        for (now, abandoned) in [(at(10), false), (at(20), false), (at(21), true)] {
            assert_eq!(reservation.abandoned(now, deadline), abandoned, "{now}");
        }
        assert_eq!(
            RenderDeadline::new(Duration::ZERO).get(),
            Duration::from_secs(1),
            "a deadline is at least a second"
        );
        assert_eq!(
            RenderDeadline::new(Duration::MAX).get(),
            RenderDeadline::LONGEST,
            "an absurd deadline is cut to a month"
        );
        assert_eq!(
            RenderDeadline::new(Duration::MAX).abandoned_before(at(0)),
            at(0) - TimeDelta::days(60)
        );
    }
}
