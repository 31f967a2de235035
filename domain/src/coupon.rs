//! Coupons: one-time bearer codes that credit a wallet.
//!
//! Redeeming moves a coupon from issued to activated only together with its two other legs (the
//! wallet credited, a ledger row written). [`Coupon::redeem`] computes all three as one
//! [`Redemption`] so an adapter writes them in one transaction, or none of them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::org::OrgMembership;
use crate::wallet::{LedgerEntry, Principal, PrincipalType, TransactionKind, Wallet, WalletError, WalletMovement};

pub const COUPON_CODE_PREFIX: &str = "cpn_";
/// Characters after the prefix: ASCII letters and digits.
pub const COUPON_CODE_RANDOM_CHARS: usize = 8;

/// Failed redemptions ([`CouponError::is_failed_guess`]) one caller may make per window before
/// it must wait: a guessing budget. 62^8 codes (about 47 bits) at 960 guesses a day take about
/// 600,000 years, on average, to hit one of a thousand live codes; a person who mistypes a code
/// still has room to retry.
pub const REDEEM_FAILURES_PER_WINDOW: u32 = 10;
/// The fixed window of the guessing budget.
pub const REDEEM_FAILURE_WINDOW: chrono::TimeDelta = chrono::TimeDelta::minutes(15);

/// A coupon code: `cpn_` followed by exactly 8 ASCII letters or digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct CouponCode(String);

impl CouponCode {
    pub fn parse(raw: &str) -> Result<Self, CouponError> {
        let random = raw.strip_prefix(COUPON_CODE_PREFIX).ok_or(CouponError::InvalidCode)?;
        if random.len() != COUPON_CODE_RANDOM_CHARS || !random.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(CouponError::InvalidCode);
        }
        Ok(Self(raw.to_owned()))
    }

    /// A code from the caller's 8 random characters.
    pub fn from_random(random: &str) -> Result<Self, CouponError> {
        Self::parse(&format!("{COUPON_CODE_PREFIX}{random}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The stored form of the code: its sha256, hex. A code is a bearer secret; 8 base62
    /// characters (about 47 bits) drawn at random are too many to search through a hash, and the
    /// caller always presents the code itself, so nothing needs the plaintext back.
    pub fn stored_hash(&self) -> String {
        coupon_code_hash(&self.0)
    }
}

/// sha256 hex of a coupon code as given (also what the migration that hashed old rows used).
pub fn coupon_code_hash(code: &str) -> String {
    hex::encode(Sha256::digest(code.as_bytes()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CouponStatus {
    Issued,
    Activated,
}

impl CouponStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Issued => "issued",
            Self::Activated => "activated",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "issued" => Some(Self::Issued),
            "activated" => Some(Self::Activated),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coupon {
    pub code: CouponCode,
    pub credit_cents: i64,
    pub status: CouponStatus,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub activated_at: Option<DateTime<Utc>>,
    pub redeemed_by: Option<Principal>,
}

/// The three legs of a redemption, to be written in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redemption {
    /// The coupon, now activated.
    pub coupon: Coupon,
    /// The credited wallet.
    pub wallet: Wallet,
    pub ledger_entry: LedgerEntry,
}

/// What `svc_ops_redeem_coupon` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CouponReceipt {
    pub coupon_code: CouponCode,
    pub credit_cents: i64,
    pub redeemed_by_principal_type: PrincipalType,
    pub redeemed_by_principal_id: String,
    pub activated_at: DateTime<Utc>,
}

impl Redemption {
    pub fn receipt(&self) -> CouponReceipt {
        CouponReceipt {
            coupon_code: self.coupon.code.clone(),
            credit_cents: self.coupon.credit_cents,
            redeemed_by_principal_type: self.wallet.principal.principal_type,
            redeemed_by_principal_id: self.wallet.principal.principal_id.clone(),
            activated_at: self.ledger_entry.created_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CouponError {
    /// Not `cpn_` plus 8 letters or digits. Answered like a missing code: no such coupon can exist.
    #[error("not a coupon code")]
    InvalidCode,
    #[error("no such coupon")]
    NotFound,
    #[error("the coupon was already redeemed")]
    AlreadyRedeemed,
    #[error("the coupon has expired")]
    Expired,
    /// `targetOrgId` was given and the caller is not a member of that org.
    #[error("caller is not a member of the target org")]
    AccessDenied,
    #[error("a coupon must credit a positive amount, got {0} cents")]
    NonPositiveCredit(i64),
    #[error(transparent)]
    Wallet(#[from] WalletError),
}

impl CouponError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidCode | Self::NotFound => "coupon_not_found",
            Self::AlreadyRedeemed => "coupon_already_redeemed",
            Self::Expired => "coupon_expired",
            Self::AccessDenied => "coupon_access_denied",
            Self::NonPositiveCredit(_) => "invalid_amount",
            Self::Wallet(error) => error.code(),
        }
    }

    /// Whether a redemption refused so spends the caller's guessing budget: every answer about
    /// the code itself (none such, already spent, expired; the last two also tell a prober it
    /// hit a real code). Refusals decided before the code is looked at (not a member of the
    /// target org) and faults of the server teach nothing about codes.
    pub fn is_failed_guess(&self) -> bool {
        match self {
            Self::InvalidCode | Self::NotFound | Self::AlreadyRedeemed | Self::Expired => true,
            Self::AccessDenied | Self::NonPositiveCredit(_) | Self::Wallet(_) => false,
        }
    }
}

impl Coupon {
    /// (none) -> issued.
    pub fn issue(
        code: CouponCode,
        credit_cents: i64,
        expires_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Coupon, CouponError> {
        if credit_cents <= 0 {
            return Err(CouponError::NonPositiveCredit(credit_cents));
        }
        Ok(Coupon {
            code,
            credit_cents,
            status: CouponStatus::Issued,
            created_at: now,
            expires_at,
            activated_at: None,
            redeemed_by: None,
        })
    }

    pub fn is_expired_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some_and(|expires_at| now >= expires_at)
    }

    /// issued -> activated, crediting `wallet` (the redeeming principal's current wallet) with
    /// a `topup` ledger row numbered `transaction_id`.
    pub fn redeem(
        &self,
        wallet: &Wallet,
        transaction_id: String,
        now: DateTime<Utc>,
    ) -> Result<Redemption, CouponError> {
        if self.status == CouponStatus::Activated {
            return Err(CouponError::AlreadyRedeemed);
        }
        if self.is_expired_at(now) {
            return Err(CouponError::Expired);
        }
        let movement = WalletMovement {
            transaction_id,
            kind: TransactionKind::Topup,
            amount_cents: self.credit_cents,
            reason: format!("coupon {}", self.code.as_str()),
            related_session_id: None,
        };
        let (wallet, ledger_entry) = wallet.apply(movement, now)?;
        let coupon = Coupon {
            status: CouponStatus::Activated,
            activated_at: Some(now),
            redeemed_by: Some(wallet.principal.clone()),
            ..self.clone()
        };
        Ok(Redemption {
            coupon,
            wallet,
            ledger_entry,
        })
    }
}

/// Whose wallet a redemption credits: the caller's own, or `target_org_id`'s when given, which
/// needs the caller to be a member of it (any role). `caller_membership` is the caller's
/// membership in the target org, `None` when they have none or the org does not exist.
pub fn redemption_target(
    caller_user_id: &str,
    target_org_id: Option<&str>,
    caller_membership: Option<&OrgMembership>,
) -> Result<Principal, CouponError> {
    match target_org_id {
        None => Ok(Principal::user(caller_user_id)),
        Some(org_id) => match caller_membership {
            Some(m) if m.org_id == org_id && m.user_id == caller_user_id => Ok(Principal::org(org_id)),
            _ => Err(CouponError::AccessDenied),
        },
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};

    use super::*;
    use crate::org::OrgRole;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 4, 1, 0, 0, 0).unwrap()
    }

    fn issued(expires_at: Option<DateTime<Utc>>) -> Coupon {
        Coupon::issue(CouponCode::parse("cpn_AbCd1234").unwrap(), 500, expires_at, now()).unwrap()
    }

    fn wallet() -> Wallet {
        Wallet {
            principal: Principal::user("u1"),
            balance_cents: 100,
            lifetime_granted_cents: 100,
            lifetime_spent_cents: 0,
            updated_at: now(),
        }
    }

    #[test]
    fn coupon_codes_are_cpn_plus_8_letters_or_digits() {
        let rows = [
            ("cpn_AbCd1234", true),
            ("cpn_00000000", true),
            ("cpn_AbCd123", false),
            ("cpn_AbCd12345", false),
            ("cpn_AbCd-234", false),
            ("CPN_AbCd1234", false),
            ("AbCd1234", false),
            ("cpn_AbCd123é", false),
            ("", false),
        ];
        for (raw, valid) in rows {
            let result = CouponCode::parse(raw);
            assert_eq!(result.is_ok(), valid, "{raw}");
            if let Err(error) = result {
                assert_eq!(error.code(), "coupon_not_found");
            }
        }
        assert_eq!(CouponCode::from_random("Zz9Zz9Zz").unwrap().as_str(), "cpn_Zz9Zz9Zz");
    }

    #[test]
    fn only_answers_about_the_code_spend_the_guessing_budget() {
        let rows = [
            (CouponError::InvalidCode, true),
            (CouponError::NotFound, true),
            (CouponError::AlreadyRedeemed, true),
            (CouponError::Expired, true),
            (CouponError::AccessDenied, false),
            (CouponError::NonPositiveCredit(0), false),
            (CouponError::Wallet(WalletError::Overflow), false),
        ];
        for (error, spends) in rows {
            assert_eq!(error.is_failed_guess(), spends, "{error:?}");
        }
    }

    #[test]
    fn redeeming_an_issued_coupon_yields_all_three_legs() {
        let later = now() + TimeDelta::minutes(1);
        let redemption = issued(None).redeem(&wallet(), "tx1".into(), later).unwrap();
        assert_eq!(redemption.coupon.status, CouponStatus::Activated);
        assert_eq!(redemption.coupon.activated_at, Some(later));
        assert_eq!(redemption.coupon.redeemed_by, Some(Principal::user("u1")));
        assert_eq!(redemption.wallet.balance_cents, 600);
        assert_eq!(redemption.wallet.lifetime_granted_cents, 600);
        assert_eq!(redemption.ledger_entry.kind, TransactionKind::Topup);
        assert_eq!(redemption.ledger_entry.delta_cents, 500);
        assert_eq!(redemption.ledger_entry.balance_after_cents, 600);
        assert_eq!(redemption.ledger_entry.transaction_id, "tx1");
        let receipt = serde_json::to_value(redemption.receipt()).unwrap();
        assert_eq!(receipt["couponCode"], "cpn_AbCd1234");
        assert_eq!(receipt["creditCents"], 500);
        assert_eq!(receipt["redeemedByPrincipalType"], "user");
        assert_eq!(receipt["redeemedByPrincipalId"], "u1");
        assert!(receipt.get("activatedAt").is_some());
    }

    #[test]
    fn redeeming_follows_the_table() {
        let expiry = now() + TimeDelta::days(1);
        let activated = issued(None).redeem(&wallet(), "tx0".into(), now()).unwrap().coupon;
        let rows: [(Coupon, DateTime<Utc>, Result<CouponStatus, &str>); 5] = [
            (issued(None), now(), Ok(CouponStatus::Activated)),
            (
                issued(Some(expiry)),
                expiry - TimeDelta::seconds(1),
                Ok(CouponStatus::Activated),
            ),
            (issued(Some(expiry)), expiry, Err("coupon_expired")),
            (activated.clone(), now(), Err("coupon_already_redeemed")),
            (
                Coupon {
                    expires_at: Some(now()),
                    ..activated
                },
                expiry,
                Err("coupon_already_redeemed"),
            ),
        ];
        for (coupon, at, expected) in rows {
            let result = coupon.redeem(&wallet(), "tx1".into(), at).map(|r| r.coupon.status);
            assert_eq!(result.map_err(|e| e.code()), expected, "{:?} at {at}", coupon.status);
        }
    }

    #[test]
    fn a_wallet_overflow_refuses_the_whole_redemption() {
        let full = Wallet {
            balance_cents: i64::MAX,
            lifetime_granted_cents: i64::MAX,
            ..wallet()
        };
        assert_eq!(
            issued(None).redeem(&full, "tx".into(), now()).unwrap_err().code(),
            "wallet_overflow"
        );
    }

    #[test]
    fn only_members_redeem_into_an_org_wallet() {
        let membership = |org: &str, user: &str| OrgMembership {
            org_id: org.into(),
            user_id: user.into(),
            role: OrgRole::Member,
            joined_at: now(),
        };
        let rows = [
            (None, None, Ok(Principal::user("u1"))),
            (Some("o1"), Some(membership("o1", "u1")), Ok(Principal::org("o1"))),
            (Some("o1"), None, Err("coupon_access_denied")),
            (Some("o1"), Some(membership("o2", "u1")), Err("coupon_access_denied")),
            (Some("o1"), Some(membership("o1", "u2")), Err("coupon_access_denied")),
        ];
        for (target, membership, expected) in rows {
            let result = redemption_target("u1", target, membership.as_ref());
            assert_eq!(result.map_err(|e| e.code()), expected, "{target:?} {membership:?}");
        }
    }

    #[test]
    fn coupons_credit_a_positive_amount() {
        let code = CouponCode::parse("cpn_AbCd1234").unwrap();
        assert_eq!(
            Coupon::issue(code.clone(), 0, None, now()).unwrap_err().code(),
            "invalid_amount"
        );
        assert_eq!(
            Coupon::issue(code, -1, None, now()).unwrap_err().code(),
            "invalid_amount"
        );
    }
}
