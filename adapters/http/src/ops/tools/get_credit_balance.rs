//! `svc_ops_get_credit_balance` (hosted): the caller's wallet (its first use grants the free
//! credit).

use svc_protocol::NoArgs;
use svc_protocol::ops_results::CreditWalletBody;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct GetCreditBalance;

impl ToolDefinition for GetCreditBalance {
    const NAME: &'static str = "svc_ops_get_credit_balance";
    const DESCRIPTION: &'static str = "Your credit wallet: balance and lifetime granted and spent, in cents.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = CreditWalletBody;
}

impl OpsTool for GetCreditBalance {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<CreditWalletBody>, ToolFailure> {
        let (credits, owner) = (ctx.credits()?, ctx.payer());
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
