//! `svc_ops_list_credit_transactions` (hosted): the caller's ledger (or with `orgId` an org's
//! the caller is a member of), newest first, `limit` 1 to
//! 100 (default 20). `nextCursor` is opaque: it names the page's last row, so rows written
//! meanwhile never shift a page. A cursor or limit we did not hand out is -32602.

use svc_application::services::operator::ListCreditTransactions as ListCommand;
use svc_protocol::ops_results::{CreditTransactionBody, CreditTransactionsResult};
use svc_protocol::ops_tools::ListCreditTransactionsArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListCreditTransactions;

impl ToolDefinition for ListCreditTransactions {
    const NAME: &'static str = "svc_ops_list_credit_transactions";
    const DESCRIPTION: &'static str = "Your credit ledger (or with orgId that of an org you are a member of), newest first: limit 1-100 (default 20), cursor from the previous page's nextCursor.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = ListCreditTransactionsArgs;
    type Output = CreditTransactionsResult;
}

impl OpsTool for ListCreditTransactions {
    async fn call(
        ctx: &OpsCtx<'_>,
        a: ListCreditTransactionsArgs,
    ) -> Result<Answer<CreditTransactionsResult>, ToolFailure> {
        let (credits, owner) = (ctx.credits()?, ctx.wallet_owner(a.org_id).await?);
        credits.welcome(&owner).await.map_err(|e| e.failure())?;
        let page = credits
            .list_transactions(ListCommand {
                principal: owner,
                limit: a.limit,
                cursor: a.cursor,
            })
            .await
            .map_err(|e| e.failure())?;
        Answer::json(CreditTransactionsResult {
            transactions: page
                .transactions
                .into_iter()
                .map(|t| CreditTransactionBody {
                    transaction_id: t.transaction_id,
                    kind: t.kind.as_str().to_owned(),
                    delta_cents: t.delta_cents,
                    balance_after_cents: t.balance_after_cents,
                    reason: t.reason,
                    created_at: iso(t.created_at),
                    related_session_id: t.related_session_id,
                })
                .collect(),
            next_cursor: page.next_cursor,
        })
    }
}
