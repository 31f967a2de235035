//! `svc_ops_set_provider_key`: stores (or rotates) the caller's key for one provider, sealed;
//! answers its summary, never the key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_application::services::hosted::{ProviderKeyService, ProviderKeySummary, SetProviderKey};

use super::super::OpsCaller;
use super::super::errors::tool_failure;
use super::super::wire::{ok, record};
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

/// The four language-model providers of the model registry.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderName {
    Openai,
    Anthropic,
    Google,
    Mistral,
}

impl ProviderName {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Google => "google",
            Self::Mistral => "mistral",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetProviderKeyArgs {
    pub provider: ProviderName,
    /// The provider's API key; stored encrypted and never shown again. Setting again rotates.
    #[schemars(length(min = 1))]
    pub plaintext_key: String,
    /// 1 to 120 characters.
    #[schemars(length(max = 120))]
    pub label: Option<String>,
}

/// Document 3's ProviderKeySummary.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKeySummaryOutput {
    pub provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub last_four: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

impl From<ProviderKeySummary> for ProviderKeySummaryOutput {
    fn from(s: ProviderKeySummary) -> Self {
        Self {
            provider: s.provider.to_owned(),
            label: s.label,
            last_four: s.last_four,
            created_at: s.created_at.to_rfc3339(),
            last_used_at: s.last_used_at.map(|t| t.to_rfc3339()),
        }
    }
}

pub async fn handle(keys: &ProviderKeyService, caller: &OpsCaller, arguments: Value) -> Result<Value, ToolFailure> {
    let a: SetProviderKeyArgs = args(arguments)?;
    let command = SetProviderKey {
        provider: a.provider.as_str().to_owned(),
        plaintext_key: a.plaintext_key,
        label: a.label,
    };
    let summary = keys.set(&super::owner(caller), command).await.map_err(tool_failure)?;
    ok(record(&ProviderKeySummaryOutput::from(summary))?)
}
