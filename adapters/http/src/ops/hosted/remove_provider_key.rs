//! `svc_ops_remove_provider_key`: deletes the caller's key for one provider; idempotent
//! (`deleted: false` when there was none).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_application::services::hosted::ProviderKeyService;

use super::super::OpsCaller;
use super::super::errors::tool_failure;
use super::super::wire::{ok, record};
use super::set_provider_key::ProviderName;
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

#[derive(Deserialize, JsonSchema)]
pub struct RemoveProviderKeyArgs {
    pub provider: ProviderName,
}

#[derive(Serialize, JsonSchema)]
pub struct RemoveProviderKeyOutput {
    pub deleted: bool,
    pub provider: String,
}

pub async fn handle(keys: &ProviderKeyService, caller: &OpsCaller, arguments: Value) -> Result<Value, ToolFailure> {
    let a: RemoveProviderKeyArgs = args(arguments)?;
    let (provider, deleted) = keys
        .remove(&super::owner(caller), a.provider.as_str())
        .await
        .map_err(tool_failure)?;
    ok(record(&RemoveProviderKeyOutput {
        deleted,
        provider: provider.as_str().to_owned(),
    })?)
}
