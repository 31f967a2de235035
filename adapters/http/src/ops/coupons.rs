//! The coupon domain: `svc_ops_redeem_coupon`. Coupons are issued by the operator command
//! `svc coupons issue`.

use serde_json::Value;
use svc_application::services::operator::{CouponService, RedeemCoupon};
use svc_protocol::ops_tools::RedeemCouponArgs;

use super::OpsCaller;
use super::errors::tool_failure;
use super::wire::{ok, record};
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

pub async fn call(
    coupons: &CouponService,
    caller: &OpsCaller,
    name: &str,
    arguments: Value,
) -> Result<Value, ToolFailure> {
    match name {
        "svc_ops_redeem_coupon" => {
            let a: RedeemCouponArgs = args(arguments)?;
            let command = RedeemCoupon {
                caller_user_id: caller.identity.clone(),
                coupon_code: a.coupon_code,
                target_org_id: a.target_org_id,
            };
            ok(record(&coupons.redeem(command).await.map_err(tool_failure)?)?)
        }
        other => unreachable!("{other} is not a coupon tool"),
    }
}
