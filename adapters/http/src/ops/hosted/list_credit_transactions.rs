//! `svc_ops_list_credit_transactions`: the caller's ledger, newest first, `limit` 1 to 100
//! (default 20) per page. `nextCursor` is opaque: it names the last row of the page, so rows
//! written meanwhile never shift a page. A cursor or limit we did not hand out is -32602.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_application::services::operator::{CreditService, ListCreditTransactions};

use super::super::OpsCaller;
use super::super::errors::tool_failure;
use super::super::wire::{ok, record};
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

#[derive(Deserialize, JsonSchema)]
pub struct ListCreditTransactionsArgs {
    /// 1 to 100; default 20.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Document 3's credit transaction.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditTransactionOutput {
    pub transaction_id: String,
    /// `free_credit`, `render_charge`, `topup` or `refund`.
    pub kind: String,
    pub delta_cents: i64,
    pub balance_after_cents: i64,
    pub reason: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_session_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListCreditTransactionsOutput {
    pub transactions: Vec<CreditTransactionOutput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

pub async fn handle(credits: &CreditService, caller: &OpsCaller, arguments: Value) -> Result<Value, ToolFailure> {
    let a: ListCreditTransactionsArgs = args(arguments)?;
    let owner = super::owner(caller);
    credits.welcome(&owner).await.map_err(tool_failure)?;
    let page = credits
        .list_transactions(ListCreditTransactions {
            principal: owner,
            limit: a.limit,
            cursor: a.cursor,
        })
        .await
        .map_err(tool_failure)?;
    let output = ListCreditTransactionsOutput {
        transactions: page
            .transactions
            .into_iter()
            .map(|t| CreditTransactionOutput {
                transaction_id: t.transaction_id,
                kind: t.kind.as_str().to_owned(),
                delta_cents: t.delta_cents,
                balance_after_cents: t.balance_after_cents,
                reason: t.reason,
                created_at: t.created_at.to_rfc3339(),
                related_session_id: t.related_session_id,
            })
            .collect(),
        next_cursor: page.next_cursor,
    };
    ok(record(&output)?)
}
