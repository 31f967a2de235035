//! Arguments of the agent tools. Each type is what the handler deserialises and what
//! `tools/list` publishes as the tool's `inputSchema`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// `svc_handshake`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeArgs {
    /// Concise semantic identity of the UI; the same intent reuses the same component.
    pub intent: String,
    pub blueprint_draft: BlueprintDraft,
    /// Skip blueprint search and go straight to validation and an agent-origin suggestion.
    #[serde(default)]
    pub force_create: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintDraft {
    /// The data contract: propsSpec, actionSpec, streamSpec, contextSpec, clientCapabilities, agentCapabilities.
    pub contract: Map<String, Value>,
    /// Design-time variance (for example `{ "density": "compact" }`).
    pub variance: Option<Map<String, Value>>,
    /// Generator slug hint.
    pub generator: Option<String>,
}

/// `svc_render`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderArgs {
    pub handshake_id: String,
    /// Props matching the agreed propsSpec; an empty object when there is no propsSpec.
    pub props: Map<String, Value>,
    /// Theme preset id from svc_list_themes.
    pub theme_id: Option<String>,
    pub infra: Option<InfraArgs>,
    /// Omit to accept the suggestion; re-aims with PATCH semantics.
    #[serde(rename = "override")]
    pub override_: Option<OverrideArgs>,
    /// Sliding lifetime of the render in seconds (60 to 2592000).
    #[schemars(range(min = 60, max = 2_592_000))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub ttl_seconds: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InfraArgs {
    /// Model route `provider:model` or `provider/model` from the model registry.
    pub model: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverrideArgs {
    /// Re-drafted contract; must already conform; generates cold.
    pub contract: Option<Map<String, Value>>,
    /// Variance patch (RFC 7396 merge over the suggestion's variance).
    pub variance: Option<Map<String, Value>>,
}

/// `svc_consume`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsumeArgs {
    pub session_id: String,
    /// Long-poll seconds, integer 0 to 25; 0 returns at once.
    #[schemars(range(min = 0, max = 25))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub timeout: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UpdateKind {
    Replace,
    Merge,
}

/// `svc_update` and `svc_amend`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateArgs {
    pub session_id: String,
    /// `replace`: props is the new state; `merge`: patch is an RFC 7396 JSON Merge Patch.
    pub kind: UpdateKind,
    pub props: Option<Map<String, Value>>,
    pub patch: Option<Map<String, Value>>,
}

/// `svc_emit`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmitArgs {
    pub session_id: String,
    /// A channel declared in the contract's streamSpec.
    pub channel: String,
    /// Validated against streamSpec[channel].schema.
    pub payload: Value,
    /// Terminal marker; only for channels declared with `complete: true`.
    pub complete: Option<bool>,
}

/// `svc_get_session` and `svc_get_render_source`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionIdArgs {
    pub session_id: String,
}

/// `svc_list_sessions`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsArgs {
    pub host_name: Option<String>,
    pub host_session_id: Option<String>,
    /// 1 to 200, default 50; newest last.
    #[schemars(range(min = 1, max = 200))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub limit: Option<u64>,
}

/// `svc_list_gadgets` and `svc_list_themes`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppScopedArgs {
    /// Defaults to the caller's app; another app's id is refused.
    pub app_id: Option<String>,
}

/// Tools whose arguments are empty.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// `svc_runtime_refresh_ws_token` (app-visible: the mounted card calls it through the host)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshWsTokenArgs {
    pub session_id: String,
}

/// `svc_runtime_sync_context` (app-visible)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncContextArgs {
    pub session_id: String,
    /// contextSpec slot values; undeclared slots are ignored, declared ones are validated.
    pub context: Map<String, Value>,
}

/// `svc_search_blueprints`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchBlueprintsArgs {
    /// Words describing the UI: matched against manifest UI names and descriptions, and by
    /// meaning against cached blueprints.
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Rows to return, 1 to 100; default 10.
    #[schemars(range(min = 1, max = 100))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub limit: Option<u64>,
}

/// `svc_render_blueprint`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderBlueprintArgs {
    /// The id a manifest UI declares in its `svc.ui.json`.
    pub blueprint_id: String,
}
