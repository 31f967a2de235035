//! Arguments of the operator tools of `/ops` (Document 3). Each type is what the handler
//! deserialises and what `tools/list` publishes as the tool's `inputSchema`, so the limits below
//! are checked before a tool runs and a violation is answered with -32602 naming the field.
//! Tools without arguments use [`crate::NoArgs`].
//!
//! Names (an app's `displayName`, an org's `name`, a connector key's `name`) carry no length
//! here: their rule is 1 to 120 characters once surrounding whitespace is trimmed, which only
//! `svc_domain::name` states (a schema length counts the untrimmed string, so it would refuse a
//! padded name the rule accepts). The domain's refusal is answered as -32602 all the same.

use schemars::JsonSchema;
use serde::Deserialize;
use svc_domain::blueprint::listing_filters;
use svc_domain::blueprint::listing_page::BlueprintPageLimit;
use svc_domain::blueprint::operator_texts;
use svc_domain::blueprint::variance_patch;

use crate::DraftContract;

/// `svc_ops_create_app`. The app id is minted by the server; an `appId` sent here is ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateAppArgs {
    /// 1 to 120 characters once surrounding whitespace is trimmed; default `My app`.
    pub display_name: Option<String>,
}

/// `svc_ops_rename_app`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameAppArgs {
    pub app_id: String,
    /// 1 to 120 characters once surrounding whitespace is trimmed.
    pub display_name: String,
}

/// `svc_ops_delete_app` and `svc_ops_set_default_app`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppIdArgs {
    pub app_id: String,
}

/// `svc_ops_update_app_system_prompt`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateAppSystemPromptArgs {
    pub app_id: String,
    /// Up to 10,000 characters, appended to the agent instructions of `/mcp` `initialize`; an
    /// empty string clears it.
    #[schemars(length(max = 10_000))]
    pub system_prompt: String,
}

/// `svc_ops_create_org`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateOrgArgs {
    /// 1 to 120 characters once surrounding whitespace is trimmed.
    pub name: String,
}

/// The roles an invite can grant; ownership is never granted by invite.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InviteRoleArg {
    Admin,
    Member,
}

impl InviteRoleArg {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Member => "member",
        }
    }
}

/// `svc_ops_invite_to_org`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteToOrgArgs {
    pub org_id: String,
    /// An RFC 5322 address (`local-part@domain`).
    pub email: String,
    pub role: InviteRoleArg,
}

/// `svc_ops_revoke_invite`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeInviteArgs {
    pub invite_id: String,
}

/// `svc_ops_issue_connector_key`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssueConnectorKeyArgs {
    /// 1 to 120 characters once surrounding whitespace is trimmed.
    pub name: Option<String>,
    /// Locks the key to this app (one of the caller's); absent: a universal key scoped per
    /// request to the caller's default app.
    pub app_id: Option<String>,
    /// ISO 8601 date or date-time (UTC when it has no offset); from then on the key no longer
    /// authenticates.
    pub expires_at: Option<String>,
}

/// `svc_ops_revoke_connector_key`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeConnectorKeyArgs {
    /// The key's row id (`id` in the listing), not the secret.
    pub key_id: String,
}

/// `svc_ops_redeem_coupon`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedeemCouponArgs {
    /// `cpn_` followed by 8 letters or digits.
    #[schemars(regex(pattern = r"^cpn_[A-Za-z0-9]{8}$"))]
    pub coupon_code: String,
    /// Credit this org's wallet instead of the caller's; the caller must be a member.
    pub target_org_id: Option<String>,
}

/// `svc_ops_generate_blueprint`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenerateBlueprintArgs {
    /// The DataContract the component is generated for (`propsSpec`, `actionSpec`, ...),
    /// counted as an agent's draft contract is (`svc_domain::contract::draft_limits`).
    pub contract: DraftContract,
    #[serde(flatten)]
    pub options: BlueprintOptionsArgs,
}

/// `svc_ops_register_blueprint`: stores the component as given; nothing is generated or validated.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegisterBlueprintArgs {
    /// The DataContract the component is for, counted as an agent's draft contract is
    /// (`svc_domain::contract::draft_limits`).
    pub contract: DraftContract,
    /// TSX with a default-exported React component.
    #[schemars(length(min = 1))]
    pub component_code: String,
    #[serde(flatten)]
    pub options: BlueprintOptionsArgs,
}

/// The optional fields generate and register share. The texts' caps are
/// `svc_domain::blueprint::operator_texts`'s, counted as sent.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintOptionsArgs {
    /// Generator slug (`builtin`, `standard`, `advanced`); the deployment's default when absent.
    pub generator: Option<String>,
    /// Who the UI is for, up to 200 characters; stored lowercase and trimmed.
    #[schemars(length(max = operator_texts::PERSONA_MAX_CHARS))]
    pub persona: Option<String>,
    /// Visual direction in words, up to 200 characters.
    #[schemars(length(max = operator_texts::AESTHETIC_MAX_CHARS))]
    pub aesthetic: Option<String>,
    /// Background the generator should know, up to 4,000 characters; also the blueprint's intent
    /// and description.
    #[schemars(length(max = operator_texts::CONTEXT_MAX_CHARS))]
    pub context: Option<String>,
    /// The operator's own instructions to the generator, up to 10,000 characters.
    #[schemars(length(max = operator_texts::SEED_PROMPT_MAX_CHARS))]
    pub seed_prompt: Option<String>,
    /// Make this blueprint the operator default for its contract.
    pub set_as_operator_default: Option<bool>,
}

/// `svc_ops_list_blueprints`: every filter given must hold; a page at a time, oldest first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListBlueprintsArgs {
    /// sha256 hex, 64 characters.
    #[schemars(length(max = listing_filters::CONTRACT_HASH_MAX_CHARS))]
    pub contract_hash: Option<String>,
    /// Up to 64 characters.
    #[schemars(length(max = listing_filters::GENERATOR_MAX_CHARS))]
    pub generator: Option<String>,
    /// Semantic: blueprints whose persona is similar to this one; up to 200 characters.
    #[schemars(length(max = listing_filters::PERSONA_FILTER_MAX_CHARS))]
    pub persona: Option<String>,
    /// Semantic: blueprints whose intent and description are similar to these words; up to 20
    /// of them, each up to 200 characters.
    #[schemars(length(max = listing_filters::INTENT_KEYWORDS_MAX_ITEMS))]
    #[schemars(inner(length(max = listing_filters::INTENT_KEYWORD_MAX_CHARS)))]
    pub intent_keywords: Option<Vec<String>>,
    /// Rows of the page: 1 to 100; default 20.
    #[schemars(range(min = 1, max = BlueprintPageLimit::MAX))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page (with the same filters).
    #[schemars(length(max = listing_filters::CURSOR_MAX_CHARS))]
    pub cursor: Option<String>,
}

/// `svc_ops_update_blueprint`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateBlueprintArgs {
    pub blueprint_id: String,
    /// Only `true`: makes this blueprint the operator default for its contract.
    pub is_operator_default: Option<OnlyTrue>,
    /// Merged into the stored variance; a field set to an empty string is removed.
    pub variance: Option<VariancePatch>,
}

/// A variance patch: up to 32 fields named in up to 64 characters, each a string of up to 200
/// characters, a number or a boolean (`svc_domain::blueprint::variance_patch`).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct VariancePatch(pub serde_json::Map<String, serde_json::Value>);

impl JsonSchema for VariancePatch {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VariancePatch".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use variance_patch::{VARIANCE_FIELD_NAME_MAX_CHARS, VARIANCE_MAX_FIELDS, VARIANCE_VALUE_MAX_CHARS};
        schemars::json_schema!({
            "type": "object",
            "maxProperties": VARIANCE_MAX_FIELDS,
            "propertyNames": { "maxLength": VARIANCE_FIELD_NAME_MAX_CHARS },
            "additionalProperties": {
                "type": ["string", "number", "boolean"],
                "maxLength": VARIANCE_VALUE_MAX_CHARS
            }
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// The literal `true` (Document 3: `isOperatorDefault?` literal true); `false` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnlyTrue;

impl<'de> Deserialize<'de> for OnlyTrue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match bool::deserialize(deserializer)? {
            true => Ok(OnlyTrue),
            false => Err(serde::de::Error::custom(
                "must be true (an operator default is replaced, not unset)",
            )),
        }
    }
}

impl JsonSchema for OnlyTrue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OnlyTrue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "const": true })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// `svc_ops_delete_blueprint`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintIdArgs {
    pub blueprint_id: String,
}

/// The four language-model providers of the model registry (hosted provider keys).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
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

/// `svc_ops_set_provider_key` (hosted)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetProviderKeyArgs {
    pub provider: ProviderName,
    /// The provider's API key; stored encrypted and never shown again. Setting again rotates.
    #[schemars(length(min = 1))]
    pub plaintext_key: String,
    /// 1 to 120 characters once surrounding whitespace is trimmed; blank means none.
    pub label: Option<String>,
    /// Set this org's key instead of the caller's; the caller must be an owner or admin.
    pub org_id: Option<String>,
}

/// `svc_ops_list_provider_keys` (hosted)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListProviderKeysArgs {
    /// List this org's keys instead of the caller's; the caller must be a member.
    pub org_id: Option<String>,
}

/// `svc_ops_remove_provider_key` (hosted)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveProviderKeyArgs {
    pub provider: ProviderName,
    /// Remove this org's key instead of the caller's; the caller must be an owner or admin.
    pub org_id: Option<String>,
}

/// `svc_ops_get_credit_balance` (hosted)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetCreditBalanceArgs {
    /// Read this org's wallet instead of the caller's; the caller must be a member.
    pub org_id: Option<String>,
}

/// `svc_ops_list_credit_transactions` (hosted)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListCreditTransactionsArgs {
    /// 1 to 100; default 20.
    #[schemars(range(min = 1, max = 100))]
    #[serde(default, deserialize_with = "crate::whole_number::optional")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// List this org's ledger instead of the caller's; the caller must be a member.
    pub org_id: Option<String>,
}
