use std::sync::Arc;

use chrono::{DateTime, Utc};
use svc_domain::coupon::{self, COUPON_CODE_RANDOM_CHARS, Coupon, CouponCode, CouponError, CouponReceipt};
use svc_domain::wallet::Principal;

use super::INTERNAL_ERROR_CODE;
use super::redemption_budget::{RedeemLimited, RedemptionBudget};
use crate::ports::operator::{CouponRepository, OrgRepository, TransitionError};
use crate::ports::rate_windows::SharedWindows;
use crate::ports::{Clock, Ids, RepositoryError};

/// Fresh codes drawn before giving up on collisions (8 base62 characters: 2^47 codes).
const ISSUE_ATTEMPTS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueCoupon {
    pub credit_cents: i64,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedeemCoupon {
    pub caller_user_id: String,
    pub coupon_code: String,
    /// Credit this org's wallet instead of the caller's; the caller must be a member.
    pub target_org_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CouponServiceError {
    #[error(transparent)]
    Coupon(#[from] CouponError),
    /// The caller spent its guessing budget (`redemption_budget`).
    #[error(transparent)]
    RateLimited(#[from] RedeemLimited),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl CouponServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Coupon(error) => error.code(),
            Self::RateLimited(_) => "rate_limited",
            Self::Storage(_) => INTERNAL_ERROR_CODE,
        }
    }
}

impl From<TransitionError<CouponError>> for CouponServiceError {
    fn from(error: TransitionError<CouponError>) -> Self {
        match error {
            TransitionError::Rejected(error) => Self::Coupon(error),
            TransitionError::Repository(error) => Self::Storage(error),
        }
    }
}

/// Coupons: issuing (operator tooling) and one-time redemption into a wallet.
pub struct CouponService {
    coupons: Arc<dyn CouponRepository>,
    orgs: Arc<dyn OrgRepository>,
    budget: RedemptionBudget,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl CouponService {
    /// `windows` count failed redemptions per caller (shared by every replica).
    pub fn new(
        coupons: Arc<dyn CouponRepository>,
        orgs: Arc<dyn OrgRepository>,
        windows: Arc<dyn SharedWindows>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            coupons,
            orgs,
            budget: RedemptionBudget::new(windows),
            clock,
            ids,
        }
    }

    /// A new coupon with a fresh random code.
    pub async fn issue(&self, command: IssueCoupon) -> Result<Coupon, CouponServiceError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let code = CouponCode::from_random(&self.ids.base62(COUPON_CODE_RANDOM_CHARS))?;
            let coupon = Coupon::issue(code, command.credit_cents, command.expires_at, self.clock.now())?;
            match self.coupons.issue(&coupon).await {
                Ok(()) => return Ok(coupon),
                Err(RepositoryError::Conflict(_)) if attempt < ISSUE_ATTEMPTS => continue,
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Redeems a coupon into the caller's wallet, or into `target_org_id`'s. Membership is
    /// checked before the code is looked at, so a non-member cannot probe codes; then the
    /// attempt is counted against the caller's guessing budget, and refused once it is spent.
    pub async fn redeem(&self, command: RedeemCoupon) -> Result<CouponReceipt, CouponServiceError> {
        let membership = match command.target_org_id.as_deref() {
            Some(org_id) => self.orgs.membership(org_id, &command.caller_user_id).await?,
            None => None,
        };
        let target = coupon::redemption_target(
            &command.caller_user_id,
            command.target_org_id.as_deref(),
            membership.as_ref(),
        )?;
        let attempt = self.budget.admit(&command.caller_user_id, self.clock.now()).await??;
        let redeemed = self.redeem_code(&command.coupon_code, &target).await;
        let failed_guess = matches!(&redeemed, Err(CouponServiceError::Coupon(e)) if e.is_failed_guess());
        if !failed_guess {
            self.budget.give_back(attempt).await;
        }
        redeemed
    }

    async fn redeem_code(&self, raw_code: &str, target: &Principal) -> Result<CouponReceipt, CouponServiceError> {
        let code = CouponCode::parse(raw_code)?;
        let redemption = self
            .coupons
            .redeem(&code, target, self.ids.ulid(), self.clock.now())
            .await?;
        Ok(redemption.receipt())
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use chrono::TimeDelta;
    use svc_domain::wallet::{Principal, PrincipalType, TransactionKind};

    use super::*;
    use crate::services::operator::CreateOrg;
    use crate::testing::OperatorFakes;

    fn redeem(caller: &str, code: &str, org: Option<&str>) -> RedeemCoupon {
        RedeemCoupon {
            caller_user_id: caller.into(),
            coupon_code: code.into(),
            target_org_id: org.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn redeeming_credits_the_callers_wallet_once() {
        let fakes = OperatorFakes::new();
        let service = fakes.coupon_service();
        let coupon = service
            .issue(IssueCoupon {
                credit_cents: 500,
                expires_at: None,
            })
            .await
            .unwrap();
        assert!(coupon.code.as_str().starts_with("cpn_"));

        let receipt = service.redeem(redeem("u1", coupon.code.as_str(), None)).await.unwrap();
        assert_eq!(receipt.credit_cents, 500);
        assert_eq!(receipt.redeemed_by_principal_type, PrincipalType::User);
        assert_eq!(receipt.redeemed_by_principal_id, "u1");
        assert_eq!(receipt.activated_at, fakes.clock.now());

        let again = service
            .redeem(redeem("u2", coupon.code.as_str(), None))
            .await
            .unwrap_err();
        assert_eq!(again.code(), "coupon_already_redeemed");
        let wallet = fakes.store.wallet(&Principal::user("u1")).unwrap();
        assert_eq!(wallet.balance_cents, 500);
        let ledger = fakes.store.ledger_of(&Principal::user("u1"));
        assert_eq!(ledger.len(), 1);
        assert_eq!(ledger[0].kind, TransactionKind::Topup);
        assert_eq!(fakes.store.wallet(&Principal::user("u2")), None);
    }

    #[tokio::test]
    async fn redeeming_into_an_org_needs_membership() {
        let fakes = OperatorFakes::new();
        let service = fakes.coupon_service();
        let org = fakes
            .org_service()
            .create_org(CreateOrg {
                caller_user_id: "owner".into(),
                name: "Acme".into(),
            })
            .await
            .unwrap();
        let coupon = service
            .issue(IssueCoupon {
                credit_cents: 700,
                expires_at: None,
            })
            .await
            .unwrap();
        let code = coupon.code.as_str();

        let denied = service
            .redeem(redeem("stranger", code, Some(&org.org_id)))
            .await
            .unwrap_err();
        assert_eq!(denied.code(), "coupon_access_denied");
        let receipt = service.redeem(redeem("owner", code, Some(&org.org_id))).await.unwrap();
        assert_eq!(receipt.redeemed_by_principal_type, PrincipalType::Org);
        assert_eq!(receipt.redeemed_by_principal_id, org.org_id);
        let wallet = fakes.store.wallet(&Principal::org(org.org_id.clone())).unwrap();
        assert_eq!(wallet.balance_cents, 700);
    }

    #[tokio::test]
    async fn unknown_malformed_and_expired_codes_are_refused() {
        let fakes = OperatorFakes::new();
        let service = fakes.coupon_service();
        let expiring = IssueCoupon {
            credit_cents: 100,
            expires_at: Some(fakes.clock.now() + TimeDelta::days(1)),
        };
        let coupon = service.issue(expiring).await.unwrap();
        fakes.clock.advance(TimeDelta::days(1));
        let rows = [
            (redeem("u1", "cpn_ZZZZZZZZ", None), "coupon_not_found"),
            (redeem("u1", "not-a-code", None), "coupon_not_found"),
            (redeem("u1", coupon.code.as_str(), None), "coupon_expired"),
        ];
        for (command, code) in rows {
            assert_eq!(
                service.redeem(command.clone()).await.unwrap_err().code(),
                code,
                "{command:?}"
            );
        }
        assert_eq!(fakes.store.wallet(&Principal::user("u1")), None);
    }

    #[tokio::test]
    async fn failed_redemptions_spend_the_callers_budget_alone() {
        use svc_domain::coupon::{REDEEM_FAILURE_WINDOW, REDEEM_FAILURES_PER_WINDOW};
        let fakes = OperatorFakes::new();
        let service = fakes.coupon_service();
        let issue = || {
            service.issue(IssueCoupon {
                credit_cents: 100,
                expires_at: None,
            })
        };
        let spent = issue().await.unwrap();
        service.redeem(redeem("u2", spent.code.as_str(), None)).await.unwrap();
        // An unknown code and a spent one are both failed guesses.
        for i in 0..REDEEM_FAILURES_PER_WINDOW {
            let code = if i % 2 == 0 {
                "cpn_ZZZZZZZZ"
            } else {
                spent.code.as_str()
            };
            let refused = service.redeem(redeem("u1", code, None)).await.unwrap_err();
            assert_ne!(refused.code(), "rate_limited", "attempt {i}");
        }
        let genuine = issue().await.unwrap();
        let limited = service
            .redeem(redeem("u1", genuine.code.as_str(), None))
            .await
            .unwrap_err();
        assert_eq!(limited.code(), "rate_limited");
        let CouponServiceError::RateLimited(limited) = limited else {
            panic!("{limited:?}")
        };
        let window_ms = u64::try_from(REDEEM_FAILURE_WINDOW.num_milliseconds()).unwrap();
        assert_eq!(limited.retry_after_ms, window_ms);

        // Another caller is not limited by it; the spent budget ends with its window.
        service.redeem(redeem("u3", genuine.code.as_str(), None)).await.unwrap();
        fakes.clock.advance(REDEEM_FAILURE_WINDOW);
        let later = issue().await.unwrap();
        service.redeem(redeem("u1", later.code.as_str(), None)).await.unwrap();
    }

    #[tokio::test]
    async fn redemptions_that_teach_nothing_about_codes_do_not_count() {
        use svc_domain::coupon::REDEEM_FAILURES_PER_WINDOW;
        let fakes = OperatorFakes::new();
        let service = fakes.coupon_service();
        for _ in 0..=REDEEM_FAILURES_PER_WINDOW {
            let coupon = service
                .issue(IssueCoupon {
                    credit_cents: 100,
                    expires_at: None,
                })
                .await
                .unwrap();
            service.redeem(redeem("u1", coupon.code.as_str(), None)).await.unwrap();
            let denied = service
                .redeem(redeem("u1", "cpn_ZZZZZZZZ", Some("org_of_others")))
                .await
                .unwrap_err();
            assert_eq!(denied.code(), "coupon_access_denied");
        }
        assert_eq!(fakes.windows.admitted(crate::services::operator::REDEEM_QUOTA, "u1"), 0);
    }

    #[tokio::test]
    async fn a_coupon_credits_a_positive_amount() {
        let fakes = OperatorFakes::new();
        let error = fakes
            .coupon_service()
            .issue(IssueCoupon {
                credit_cents: 0,
                expires_at: None,
            })
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_amount");
    }
}
