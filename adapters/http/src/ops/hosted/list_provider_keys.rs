//! `svc_ops_list_provider_keys`: the caller's provider keys as summaries (`lastFour`, never the key).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use svc_application::services::hosted::ProviderKeyService;

use super::super::OpsCaller;
use super::super::errors::tool_failure;
use super::super::wire::{ok, record};
use super::set_provider_key::ProviderKeySummaryOutput;
use crate::mcp::errors::ToolFailure;

#[derive(Serialize, JsonSchema)]
pub struct ListProviderKeysOutput {
    pub keys: Vec<ProviderKeySummaryOutput>,
}

pub async fn handle(keys: &ProviderKeyService, caller: &OpsCaller) -> Result<Value, ToolFailure> {
    let listed = keys.list(&super::owner(caller)).await.map_err(tool_failure)?;
    let output = ListProviderKeysOutput {
        keys: listed.into_iter().map(ProviderKeySummaryOutput::from).collect(),
    };
    ok(record(&output)?)
}
