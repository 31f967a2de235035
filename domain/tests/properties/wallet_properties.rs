//! Property: through any sequence of credits, charges and refunds a wallet's balance equals
//! lifetime granted minus lifetime spent, never goes negative, and a refused movement changes
//! nothing.

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use proptest::prelude::*;
use svc_domain::wallet::{Principal, TransactionKind, Wallet, WalletMovement};

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
}

fn kind() -> impl Strategy<Value = TransactionKind> {
    prop::sample::select(TransactionKind::ALL.to_vec())
}

fn movements() -> impl Strategy<Value = Vec<(TransactionKind, i64)>> {
    // Amounts include zero, negatives and huge values so refusals are exercised too.
    let amount = prop_oneof![8 => 1i64..10_000, 1 => -10i64..=0, 1 => (i64::MAX - 10)..=i64::MAX];
    prop::collection::vec((kind(), amount), 0..64)
}

proptest! {
    #[test]
    fn balance_is_granted_minus_spent_and_never_negative(steps in movements()) {
        let mut wallet = Wallet::open(Principal::user("u1"), start());
        let mut ledger_sum: i64 = 0;
        for (index, (kind, amount)) in steps.into_iter().enumerate() {
            let now = start() + TimeDelta::seconds(index as i64 + 1);
            let movement = WalletMovement {
                transaction_id: format!("t{index}"),
                kind,
                amount_cents: amount,
                reason: "property".into(),
                related_session_id: None,
            };
            match wallet.apply(movement, now) {
                Ok((next, entry)) => {
                    prop_assert_eq!(entry.balance_after_cents, next.balance_cents);
                    prop_assert_eq!(next.balance_cents - wallet.balance_cents, entry.delta_cents);
                    ledger_sum += entry.delta_cents;
                    wallet = next;
                }
                Err(error) => {
                    // A refused movement is one of the typed refusals; the wallet is unchanged.
                    prop_assert!(["insufficient_credit", "refund_exceeds_spent", "invalid_amount", "wallet_overflow"]
                        .contains(&error.code()));
                }
            }
            prop_assert!(wallet.balance_cents >= 0);
            prop_assert_eq!(wallet.balance_cents, wallet.lifetime_granted_cents - wallet.lifetime_spent_cents);
            prop_assert!(wallet.invariant_holds());
            prop_assert_eq!(ledger_sum, wallet.balance_cents, "the ledger replays to the balance");
        }
    }
}
