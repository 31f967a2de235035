//! `svc_ops_redeem_coupon`. Coupons are issued by the operator command `svc coupons issue`.

use svc_application::services::operator::RedeemCoupon as RedeemCouponCommand;
use svc_protocol::ops_results::CouponReceiptBody;
use svc_protocol::ops_tools::RedeemCouponArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct RedeemCoupon;

impl ToolDefinition for RedeemCoupon {
    const NAME: &'static str = "svc_ops_redeem_coupon";
    const DESCRIPTION: &'static str =
        "Redeem a one-time coupon into the caller's credit wallet, or into an org's the caller belongs to.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = RedeemCouponArgs;
    type Output = CouponReceiptBody;
}

impl OpsTool for RedeemCoupon {
    async fn call(ctx: &OpsCtx<'_>, a: RedeemCouponArgs) -> Result<Answer<CouponReceiptBody>, ToolFailure> {
        let command = RedeemCouponCommand {
            caller_user_id: ctx.owner().to_owned(),
            coupon_code: a.coupon_code,
            target_org_id: a.target_org_id,
        };
        let receipt = ctx.coupons()?.redeem(command).await.map_err(|e| e.failure())?;
        Answer::json(CouponReceiptBody {
            coupon_code: receipt.coupon_code.as_str().to_owned(),
            credit_cents: receipt.credit_cents,
            redeemed_by_principal_type: receipt.redeemed_by_principal_type.as_str().to_owned(),
            redeemed_by_principal_id: receipt.redeemed_by_principal_id,
            activated_at: iso(receipt.activated_at),
        })
    }
}
