//! Credit wallets and their ledger.
//!
//! A wallet belongs to a principal (a user or an org) and keeps three counters. Every movement
//! produces the next wallet and exactly one ledger row, so an adapter can write both in one
//! transaction. The invariant `balance == lifetime granted - lifetime spent` holds after every
//! movement, and the balance never goes negative:
//!
//! - `free_credit` and `topup` add to the balance and to lifetime granted;
//! - `render_charge` takes from the balance and adds to lifetime spent, and is refused with
//!   `insufficient_credit` when the balance is too small;
//! - `refund` gives back part of what was spent: it adds to the balance and *reduces lifetime
//!   spent* (rather than adding to lifetime granted), so lifetime spent stays "what was actually
//!   consumed". A refund larger than lifetime spent is refused.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What kind of principal owns a wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalType {
    User,
    Org,
}

impl PrincipalType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Org => "org",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "user" => Some(Self::User),
            "org" => Some(Self::Org),
            _ => None,
        }
    }
}

/// The owner of a wallet, and the party a coupon is redeemed for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    pub principal_type: PrincipalType,
    pub principal_id: String,
}

impl Principal {
    pub fn user(id: impl Into<String>) -> Self {
        Self {
            principal_type: PrincipalType::User,
            principal_id: id.into(),
        }
    }

    pub fn org(id: impl Into<String>) -> Self {
        Self {
            principal_type: PrincipalType::Org,
            principal_id: id.into(),
        }
    }
}

/// Kinds of credit transaction, with their wire names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionKind {
    FreeCredit,
    RenderCharge,
    Topup,
    Refund,
}

impl TransactionKind {
    pub const ALL: [Self; 4] = [Self::FreeCredit, Self::RenderCharge, Self::Topup, Self::Refund];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::FreeCredit => "free_credit",
            Self::RenderCharge => "render_charge",
            Self::Topup => "topup",
            Self::Refund => "refund",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == value)
    }
}

/// A credit wallet. `principal` is the key, not part of the wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    #[serde(skip)]
    pub principal: Principal,
    pub balance_cents: i64,
    pub lifetime_granted_cents: i64,
    pub lifetime_spent_cents: i64,
    pub updated_at: DateTime<Utc>,
}

/// One requested change to a wallet. `amount_cents` is always positive; `kind` gives its sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletMovement {
    pub transaction_id: String,
    pub kind: TransactionKind,
    pub amount_cents: i64,
    pub reason: String,
    pub related_session_id: Option<String>,
}

/// One ledger row: the movement as applied, with the balance it left behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub transaction_id: String,
    #[serde(skip)]
    pub principal: Principal,
    pub kind: TransactionKind,
    pub delta_cents: i64,
    pub balance_after_cents: i64,
    pub reason: String,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalletError {
    #[error("amount must be positive, got {0} cents")]
    NonPositiveAmount(i64),
    #[error("insufficient credit: balance {balance_cents} cents, charge {requested_cents} cents")]
    InsufficientCredit { balance_cents: i64, requested_cents: i64 },
    #[error("refund of {requested_cents} cents exceeds lifetime spent {lifetime_spent_cents} cents")]
    RefundExceedsSpent {
        lifetime_spent_cents: i64,
        requested_cents: i64,
    },
    #[error("amount overflows the wallet counters")]
    Overflow,
}

impl WalletError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NonPositiveAmount(_) => "invalid_amount",
            Self::InsufficientCredit { .. } => "insufficient_credit",
            Self::RefundExceedsSpent { .. } => "refund_exceeds_spent",
            Self::Overflow => "wallet_overflow",
        }
    }
}

impl Wallet {
    /// A zero-balance wallet, as created with every org and on a user's first movement.
    pub fn open(principal: Principal, now: DateTime<Utc>) -> Self {
        Self {
            principal,
            balance_cents: 0,
            lifetime_granted_cents: 0,
            lifetime_spent_cents: 0,
            updated_at: now,
        }
    }

    /// `balance == granted - spent`, and no counter is negative.
    pub fn invariant_holds(&self) -> bool {
        self.balance_cents >= 0
            && self.lifetime_granted_cents >= 0
            && self.lifetime_spent_cents >= 0
            && self.lifetime_granted_cents.checked_sub(self.lifetime_spent_cents) == Some(self.balance_cents)
    }

    /// Applies one movement: the next wallet and its ledger row, or why it was refused.
    pub fn apply(&self, movement: WalletMovement, now: DateTime<Utc>) -> Result<(Wallet, LedgerEntry), WalletError> {
        let amount = movement.amount_cents;
        if amount <= 0 {
            return Err(WalletError::NonPositiveAmount(amount));
        }
        let mut next = self.clone();
        let delta = match movement.kind {
            TransactionKind::FreeCredit | TransactionKind::Topup => {
                next.lifetime_granted_cents = add(self.lifetime_granted_cents, amount)?;
                next.balance_cents = add(self.balance_cents, amount)?;
                amount
            }
            TransactionKind::RenderCharge => {
                if amount > self.balance_cents {
                    return Err(WalletError::InsufficientCredit {
                        balance_cents: self.balance_cents,
                        requested_cents: amount,
                    });
                }
                next.lifetime_spent_cents = add(self.lifetime_spent_cents, amount)?;
                next.balance_cents = self.balance_cents - amount;
                -amount
            }
            TransactionKind::Refund => {
                if amount > self.lifetime_spent_cents {
                    return Err(WalletError::RefundExceedsSpent {
                        lifetime_spent_cents: self.lifetime_spent_cents,
                        requested_cents: amount,
                    });
                }
                next.lifetime_spent_cents = self.lifetime_spent_cents - amount;
                next.balance_cents = add(self.balance_cents, amount)?;
                amount
            }
        };
        next.updated_at = now;
        let entry = LedgerEntry {
            transaction_id: movement.transaction_id,
            principal: self.principal.clone(),
            kind: movement.kind,
            delta_cents: delta,
            balance_after_cents: next.balance_cents,
            reason: movement.reason,
            created_at: now,
            related_session_id: movement.related_session_id,
        };
        Ok((next, entry))
    }
}

fn add(a: i64, b: i64) -> Result<i64, WalletError> {
    a.checked_add(b).ok_or(WalletError::Overflow)
}

/// Page size of the credit transaction listing: 1 to 100, default 20.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerPageLimit(u32);

impl LedgerPageLimit {
    pub const DEFAULT: u32 = 20;
    pub const MAX: u32 = 100;

    pub fn new(requested: Option<u32>) -> Result<Self, InvalidPageLimit> {
        match requested.unwrap_or(Self::DEFAULT) {
            limit @ 1..=Self::MAX => Ok(Self(limit)),
            other => Err(InvalidPageLimit(other)),
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("limit must be between 1 and {max}, got {0}", max = LedgerPageLimit::MAX)]
pub struct InvalidPageLimit(pub u32);

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
    }

    fn wallet(balance: i64, granted: i64, spent: i64) -> Wallet {
        Wallet {
            principal: Principal::user("u1"),
            balance_cents: balance,
            lifetime_granted_cents: granted,
            lifetime_spent_cents: spent,
            updated_at: at(0),
        }
    }

    fn movement(kind: TransactionKind, amount: i64) -> WalletMovement {
        WalletMovement {
            transaction_id: "t1".into(),
            kind,
            amount_cents: amount,
            reason: "test".into(),
            related_session_id: None,
        }
    }

    #[test]
    fn movements_follow_the_table() {
        use TransactionKind::*;
        // (start (balance, granted, spent), kind, amount, expected (balance, granted, spent, delta) or error code)
        type Row = (
            (i64, i64, i64),
            TransactionKind,
            i64,
            Result<(i64, i64, i64, i64), &'static str>,
        );
        let rows: [Row; 10] = [
            ((0, 0, 0), FreeCredit, 500, Ok((500, 500, 0, 500))),
            ((100, 100, 0), Topup, 250, Ok((350, 350, 0, 250))),
            ((300, 300, 0), RenderCharge, 120, Ok((180, 300, 120, -120))),
            ((300, 300, 0), RenderCharge, 300, Ok((0, 300, 300, -300))),
            ((100, 100, 0), RenderCharge, 101, Err("insufficient_credit")),
            ((180, 300, 120), Refund, 20, Ok((200, 300, 100, 20))),
            ((180, 300, 120), Refund, 121, Err("refund_exceeds_spent")),
            ((0, 0, 0), Topup, 0, Err("invalid_amount")),
            ((0, 0, 0), RenderCharge, -5, Err("invalid_amount")),
            ((1, i64::MAX, i64::MAX - 1), Topup, 1, Err("wallet_overflow")),
        ];
        for ((balance, granted, spent), kind, amount, expected) in rows {
            let before = wallet(balance, granted, spent);
            let result = before.apply(movement(kind, amount), at(9));
            match (result, expected) {
                (Ok((after, entry)), Ok((b, g, s, delta))) => {
                    assert_eq!(
                        (
                            after.balance_cents,
                            after.lifetime_granted_cents,
                            after.lifetime_spent_cents
                        ),
                        (b, g, s),
                        "{kind:?} {amount}"
                    );
                    assert_eq!(entry.delta_cents, delta);
                    assert_eq!(entry.balance_after_cents, b);
                    assert_eq!(entry.kind, kind);
                    assert_eq!(after.updated_at, at(9));
                    assert_eq!(entry.created_at, at(9));
                    assert!(after.invariant_holds());
                }
                (Err(error), Err(code)) => assert_eq!(error.code(), code, "{kind:?} {amount}"),
                (got, want) => panic!("{kind:?} {amount}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_refused_movement_leaves_the_wallet_untouched() {
        let before = wallet(10, 10, 0);
        assert!(
            before
                .apply(movement(TransactionKind::RenderCharge, 11), at(1))
                .is_err()
        );
        assert_eq!(before, wallet(10, 10, 0));
    }

    #[test]
    fn an_opened_wallet_is_empty() {
        let opened = Wallet::open(Principal::org("o1"), at(3));
        assert_eq!(
            (
                opened.balance_cents,
                opened.lifetime_granted_cents,
                opened.lifetime_spent_cents
            ),
            (0, 0, 0)
        );
        assert!(opened.invariant_holds());
    }

    #[test]
    fn wire_names_are_snake_case() {
        for kind in TransactionKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert_eq!(TransactionKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(PrincipalType::parse("org"), Some(PrincipalType::Org));
        assert_eq!(PrincipalType::parse("team"), None);
        let wire = serde_json::to_value(wallet(1, 1, 0)).unwrap();
        assert_eq!(wire["balanceCents"], 1);
        assert!(wire.get("principal").is_none());
    }

    mod storm {
        use proptest::prelude::*;

        use super::*;

        fn kind() -> impl Strategy<Value = TransactionKind> {
            prop_oneof![
                Just(TransactionKind::FreeCredit),
                Just(TransactionKind::Topup),
                Just(TransactionKind::RenderCharge),
                Just(TransactionKind::Refund),
            ]
        }

        proptest! {
            /// Any sequence of grants, charges (reservations) and refunds, each applied or
            /// refused: the balance never goes negative and always equals the ledger's sum.
            #[test]
            fn the_balance_is_the_ledger_sum_and_never_negative(
                moves in proptest::collection::vec((kind(), -5i64..400), 0..200)
            ) {
                let mut wallet = Wallet::open(Principal::user("u"), at(0));
                let mut ledger_sum = 0i64;
                for (kind, amount) in moves {
                    match wallet.apply(movement(kind, amount), at(1)) {
                        Ok((next, entry)) => {
                            ledger_sum += entry.delta_cents;
                            prop_assert_eq!(entry.balance_after_cents, next.balance_cents);
                            wallet = next;
                        }
                        Err(WalletError::InsufficientCredit { balance_cents, requested_cents }) => {
                            prop_assert_eq!(balance_cents, wallet.balance_cents);
                            prop_assert!(requested_cents > balance_cents);
                        }
                        Err(_) => {}
                    }
                    prop_assert!(wallet.balance_cents >= 0);
                    prop_assert!(wallet.invariant_holds());
                    prop_assert_eq!(wallet.balance_cents, ledger_sum);
                }
            }
        }
    }

    #[test]
    fn page_limit_defaults_to_20_and_stays_within_1_to_100() {
        assert_eq!(LedgerPageLimit::new(None).unwrap().get(), 20);
        assert_eq!(LedgerPageLimit::new(Some(1)).unwrap().get(), 1);
        assert_eq!(LedgerPageLimit::new(Some(100)).unwrap().get(), 100);
        assert_eq!(LedgerPageLimit::new(Some(0)), Err(InvalidPageLimit(0)));
        assert_eq!(LedgerPageLimit::new(Some(101)), Err(InvalidPageLimit(101)));
    }
}
