//! `svc_ops_get_credit_balance` (hosted): the caller's wallet (its first use grants the free
//! credit), or with `orgId` an org's the caller is a member of.

use svc_protocol::ops_results::CreditWalletBody;
use svc_protocol::ops_tools::GetCreditBalanceArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct GetCreditBalance;

impl ToolDefinition for GetCreditBalance {
    const NAME: &'static str = "svc_ops_get_credit_balance";
    const DESCRIPTION: &'static str = "Your credit wallet (or with orgId the wallet of an org you are a member of): balance and lifetime granted and spent, in cents.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = GetCreditBalanceArgs;
    type Output = CreditWalletBody;
}

impl OpsTool for GetCreditBalance {
    async fn call(ctx: &OpsCtx<'_>, a: GetCreditBalanceArgs) -> Result<Answer<CreditWalletBody>, ToolFailure> {
        let (credits, owner) = (ctx.credits()?, ctx.wallet_owner(a.org_id).await?);
        credits.welcome(&owner).await.map_err(|e| e.failure())?;
        let wallet = credits.balance(&owner).await.map_err(|e| e.failure())?;
        Answer::json(CreditWalletBody {
            balance_cents: wallet.balance_cents,
            lifetime_granted_cents: wallet.lifetime_granted_cents,
            lifetime_spent_cents: wallet.lifetime_spent_cents,
            updated_at: iso(wallet.updated_at),
        })
    }
}
