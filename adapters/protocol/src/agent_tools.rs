//! Arguments of the agent tools. Each type is what the handler deserialises and what
//! `tools/list` publishes as the tool's `inputSchema`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use svc_domain::blueprint::listing_filters::GENERATOR_MAX_CHARS;
use svc_domain::blueprint::variance_patch::{
    VARIANCE_FIELD_NAME_MAX_CHARS, VARIANCE_MAX_FIELDS, VARIANCE_VALUE_MAX_CHARS,
};
use svc_domain::contract::draft_limits;

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
    pub contract: DraftContract,
    /// Design-time variance (for example `{ "density": "compact" }`): up to 32 fields named in
    /// up to 64 characters, each a string of up to 200 characters, a number or a boolean.
    pub variance: Option<DraftVariance>,
    /// Generator slug hint, up to 64 characters.
    #[schemars(length(max = GENERATOR_MAX_CHARS))]
    pub generator: Option<String>,
}

/// A draft contract (`blueprintDraft.contract`, `override.contract`, and the operator's
/// `svc_ops_generate_blueprint` and `svc_ops_register_blueprint` `contract`). Its schemas are bounded by
/// the complexity budgets at negotiation; the counts around them here
/// (`svc_domain::contract::draft_limits`). Only count and length keywords: a part of the wrong
/// type is negotiation's finding, as it always was.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct DraftContract(pub Map<String, Value>);

impl JsonSchema for DraftContract {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DraftContract".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use draft_limits::*;
        let section = serde_json::json!({
            "maxProperties": SECTION_MAX_ENTRIES,
            "additionalProperties": { "maxProperties": ENTRY_MAX_KEYS }
        });
        schemars::json_schema!({
            "type": "object",
            "maxProperties": CONTRACT_MAX_KEYS,
            "properties": {
                "actionSpec": section,
                "streamSpec": section,
                "contextSpec": section,
                "clientCapabilities": {
                    "maxProperties": CAPABILITIES_MAX_KEYS,
                    "properties": {
                        "gadgets": {
                            "maxProperties": GADGETS_MAX_PACKAGES,
                            "propertyNames": { "maxLength": GADGET_PACKAGE_MAX_CHARS },
                            "additionalProperties": { "maxLength": GADGET_VERSION_MAX_CHARS }
                        }
                    }
                },
                "agentCapabilities": {
                    "maxProperties": CAPABILITIES_MAX_KEYS,
                    "properties": {
                        "tools": {
                            "maxItems": TOOLS_MAX_ITEMS,
                            "items": { "maxLength": TOOL_NAME_MAX_CHARS }
                        }
                    }
                }
            }
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// A handshake's variance: bounded as an operator's variance patch is
/// (`svc_domain::blueprint::variance_patch`), since it is stored and listed with the blueprint.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct DraftVariance(pub Map<String, Value>);

impl JsonSchema for DraftVariance {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DraftVariance".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        variance_schema(&["string", "number", "boolean"])
    }

    fn inline_schema() -> bool {
        true
    }
}

/// `override.variance`: an RFC 7396 merge patch over the handshake's variance, bounded like it;
/// `null` removes a field.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct VarianceOverride(pub Map<String, Value>);

impl JsonSchema for VarianceOverride {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VarianceOverride".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        variance_schema(&["string", "number", "boolean", "null"])
    }

    fn inline_schema() -> bool {
        true
    }
}

fn variance_schema(value_types: &[&str]) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": VARIANCE_MAX_FIELDS,
        "propertyNames": { "maxLength": VARIANCE_FIELD_NAME_MAX_CHARS },
        "additionalProperties": { "type": value_types, "maxLength": VARIANCE_VALUE_MAX_CHARS }
    })
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

/// Inline, so that a refusal inside it names its field (behind a `$ref`, the optional field is
/// an `anyOf` whose refusal names only `override`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline)]
pub struct OverrideArgs {
    /// Re-drafted contract; must already conform; generates cold.
    pub contract: Option<DraftContract>,
    /// Variance patch (RFC 7396 merge over the suggestion's variance; null removes a field): up
    /// to 32 fields named in up to 64 characters, each a string of up to 200 characters, a
    /// number, a boolean or null; merged, at most 32 fields.
    pub variance: Option<VarianceOverride>,
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
