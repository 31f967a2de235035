//! `svc_ops_get_credit_balance`: the caller's wallet (its first use grants the free credit).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use svc_application::services::operator::CreditService;

use super::super::OpsCaller;
use super::super::errors::tool_failure;
use super::super::wire::{ok, record};
use crate::mcp::errors::ToolFailure;

/// Document 3's credit wallet.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditWalletOutput {
    pub balance_cents: i64,
    pub lifetime_granted_cents: i64,
    pub lifetime_spent_cents: i64,
    pub updated_at: String,
}

pub async fn handle(credits: &CreditService, caller: &OpsCaller) -> Result<Value, ToolFailure> {
    let owner = super::owner(caller);
    credits.welcome(&owner).await.map_err(tool_failure)?;
    let wallet = credits.balance(&owner).await.map_err(tool_failure)?;
    ok(record(&CreditWalletOutput {
        balance_cents: wallet.balance_cents,
        lifetime_granted_cents: wallet.lifetime_granted_cents,
        lifetime_spent_cents: wallet.lifetime_spent_cents,
        updated_at: wallet.updated_at.to_rfc3339(),
    })?)
}
