//! Results of the agent tools: each type is what the handler answers as `structuredContent` and
//! what `tools/list` publishes as the tool's `outputSchema` (Document 1's bodies). Optional fields
//! are left out of the JSON when absent, as Document 1 shows them.

mod closed_sets;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

pub use closed_sets::{ActionBody, ConsumeStatus, HandshakeState, RenderFailureCode, RenderGateCode, RetryBody};

/// A contract finding: an amendment the server made, or why a draft was declined.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FindingBody {
    pub code: String,
    pub path: String,
    pub message: String,
}

/// What to call next, with arguments that would run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NextStep {
    pub tool: String,
    pub example: Value,
}

/// `svc_handshake`: an agreed contract, or a declined draft.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HandshakeResult {
    Agreed(Box<HandshakeAgreed>),
    Declined(HandshakeDeclined),
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeAgreed {
    pub handshake_id: String,
    /// `create`, `reuse`, `update` or `replace`.
    pub action: String,
    pub suggestion: Suggestion,
    pub props_schema_hash: String,
    /// `grammar-safe` or `full`.
    pub props_schema_profile: String,
    pub next_step: NextStep,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub props_schema: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    /// `cache`, `agent` or `synth`.
    pub origin: String,
    pub blueprint_meta: BlueprintMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amendments: Option<Vec<FindingBody>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation_findings: Option<Vec<FindingBody>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<SuggestionCache>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintMeta {
    pub blueprint_id: String,
    pub intent: String,
    pub contract_hash: String,
    pub variant_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SuggestionCache {
    pub similarity: f64,
    pub kind: String,
    pub reason: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeDeclined {
    /// Always `declined`.
    pub action: String,
    pub findings: Vec<FindingBody>,
    pub next_step: NextStep,
}

/// `svc_render`: read `outcome` first (`rendered`, `failed` or `refused`). `failed` and
/// `refused` come as error results.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum RenderOutcome {
    Rendered(Rendered),
    Failed(RenderFailed),
    Refused(RenderRefused),
}

/// What every render that ran says about itself.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderIdentityBody {
    pub session_id: String,
    pub action: ActionBody,
    pub contract_hash: String,
    pub blueprint_id: String,
    pub variant_key: String,
    pub cache: CacheBody,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CacheBody {
    pub hit: bool,
    pub llm_calls_avoided: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_blueprint_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rendered {
    #[serde(flatten)]
    pub identity: RenderIdentityBody,
    pub resource_uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<NextStep>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RenderFailed {
    #[serde(flatten)]
    pub identity: RenderIdentityBody,
    pub error: ErrorBody,
}

/// Nothing ran: the refusal is the only field beside `outcome`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RenderRefused {
    pub refusal: RefusalBody,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefusalBody {
    pub code: RenderGateCode,
    pub message: String,
    pub fix: String,
    pub retry: RetryBody,
    /// The same handshakeId renders once the cause is fixed.
    pub handshake: HandshakeState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance_cents_at_check: Option<i64>,
}

/// `{ code, message }` of a failed render.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: RenderFailureCode,
    pub message: String,
}

/// `svc_consume`
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConsumeResult {
    pub events: Vec<ActionEventBody>,
    pub status: ConsumeStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionEventBody {
    /// Always `action`.
    #[serde(rename = "type")]
    pub kind: String,
    pub session_id: String,
    pub intent: String,
    pub action_data: Value,
    pub ui_context: Value,
    pub action_id: String,
    pub fired_at: String,
}

/// `svc_update` and `svc_amend` (`epoch` only for `svc_update`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateResult {
    pub session_id: String,
    pub updated: bool,
    pub resource_uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub props_schema_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub props_schema_profile: Option<String>,
}

/// `svc_emit`
#[derive(Debug, Serialize, JsonSchema)]
pub struct EmitResult {
    pub accepted: bool,
}

/// `svc_get_session`: times are epoch milliseconds.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResult {
    /// `render` or `mcpApps`.
    pub variant: String,
    pub id: String,
    pub app_id: String,
    pub event_sequence: i64,
    pub created_at: i64,
    pub last_activity_at: i64,
    pub expires_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_snapshot: Option<Value>,
}

/// `svc_get_render_source`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderSourceResult {
    pub session_id: String,
    pub blueprint: RenderSourceBlueprint,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderSourceBlueprint {
    pub source: String,
    pub contract: Value,
    pub fixture_props: Value,
}

/// `svc_list_sessions`
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionsResult {
    pub sessions: Vec<SessionRow>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    pub session_id: String,
    pub created_at: String,
    pub last_activity_at: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_session_id: Option<String>,
    /// Only for an active session: what a host re-mounting the card subscribes with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ws_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ws_token_expires_at: Option<String>,
}

/// `svc_list_gadgets`: each package as its declarer wrote it (package, version, exports, ...).
#[derive(Debug, Serialize, JsonSchema)]
pub struct GadgetsResult {
    pub gadgets: Vec<Map<String, Value>>,
}

/// `svc_list_themes`
#[derive(Debug, Serialize, JsonSchema)]
pub struct ThemesResult {
    pub themes: Vec<ThemeRow>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ThemeRow {
    pub id: String,
    pub name: String,
    pub description: String,
    /// `light` and/or `dark`.
    pub modes: Vec<String>,
}

/// A BlueprintEntry row of the blueprint tools.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BlueprintEntryBody {
    pub id: String,
    pub name: String,
    pub description: String,
    pub category: String,
    pub props: Vec<String>,
    pub callbacks: Vec<String>,
    pub featured: bool,
}

/// `svc_list_featured_blueprints`
#[derive(Debug, Serialize, JsonSchema)]
pub struct FeaturedBlueprintsResult {
    pub total: usize,
    pub blueprints: Vec<BlueprintEntryBody>,
}

/// `svc_search_blueprints`
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchBlueprintsResult {
    pub results: Vec<SearchHit>,
    pub total: usize,
    pub query: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchHit {
    #[serde(flatten)]
    pub entry: BlueprintEntryBody,
    /// Always `match`.
    pub relevance: String,
    /// 0 to 1, best first.
    pub score: f64,
}

/// `svc_render_blueprint`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderBlueprintResult {
    pub blueprint_id: String,
    pub blueprint_name: String,
    pub code: String,
    pub content_type: String,
}

/// `svc_runtime_refresh_ws_token`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WsTokenResult {
    pub session_id: String,
    pub ws_token: String,
    pub expires_at: String,
}

/// `svc_runtime_sync_context`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncContextResult {
    pub accepted: bool,
    pub context_snapshot: Value,
}

/// `svc_discover` (hosted deployments): what this deployment renders and, for the caller's app,
/// its hosted settings.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    pub protocol_version: &'static str,
    pub content_types: Vec<&'static str>,
    pub shell_types: Vec<&'static str>,
    pub adapter_types: Vec<&'static str>,
    /// The hooks and components every mounted component can import (the standard package).
    pub component_capabilities: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<DiscoveredApp>,
}

/// The caller's app's settings; fields not set are left out.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveredApp {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_adapters: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granted_capabilities: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_shell_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_minute: Option<u32>,
}
