//! Results of the operator tools of `/ops` (Document 3's records in camelCase): each type is what
//! the handler answers as `structuredContent` and what `tools/list` publishes as `outputSchema`.
//! Every time is RFC 3339 UTC with milliseconds; optional fields are left out when absent.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// `AppRecord`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppBody {
    pub app_id: String,
    pub display_name: String,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
}

/// `svc_ops_list_apps`
#[derive(Debug, Serialize, JsonSchema)]
pub struct AppsResult {
    pub apps: Vec<AppBody>,
}

/// The answer of the idempotent deletes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeletedResult {
    pub deleted: bool,
}

/// `svc_ops_set_default_app`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultAppResult {
    pub default_app_id: String,
}

/// `OrgMembershipRecord`: a membership joined with its org.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgMembershipBody {
    pub org_id: String,
    pub name: String,
    pub owner_user_id: String,
    /// `owner`, `admin` or `member`.
    pub role: String,
    pub joined_at: String,
    /// Our field: the org's invites, newest first, on the rows of orgs the caller administers
    /// (owner or admin); absent on a plain member's row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invites: Option<Vec<OrgInviteBody>>,
}

/// One invite of an org in `svc_ops_list_orgs`, with its status now (`pending`, `accepted`,
/// `revoked` or `expired`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgInviteBody {
    pub invite_id: String,
    pub email: String,
    /// `admin` or `member`.
    pub role: String,
    pub inviter_user_id: String,
    pub status: String,
    pub expires_at: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

/// `svc_ops_list_orgs`
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrgsResult {
    pub orgs: Vec<OrgMembershipBody>,
}

/// `svc_ops_create_org`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgBody {
    pub org_id: String,
    pub name: String,
    pub owner_user_id: String,
    pub created_at: String,
    pub updated_at: String,
}

/// `svc_ops_invite_to_org`: the invite, and whether a pending one was reused.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteBody {
    pub invite_id: String,
    pub org_id: String,
    pub email: String,
    /// `admin` or `member`.
    pub role: String,
    pub inviter_user_id: String,
    /// `pending`, `accepted`, `revoked` or `expired`.
    pub status: String,
    pub expires_at: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_by_user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    pub reused: bool,
}

/// `svc_ops_revoke_invite`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteRevokedBody {
    pub invite_id: String,
    pub status: String,
    pub already_revoked: bool,
}

/// A connector key's metadata: never the secret, never its hash.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorKeyBody {
    pub id: String,
    pub api_key_prefix: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// `active` or `revoked`.
    pub status: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// `svc_ops_list_connector_keys`
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConnectorKeysResult {
    pub keys: Vec<ConnectorKeyBody>,
}

/// `svc_ops_issue_connector_key`: `plaintextKey` is shown only here.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuedKeyBody {
    #[serde(flatten)]
    pub key: ConnectorKeyBody,
    pub plaintext_key: String,
}

/// `svc_ops_revoke_connector_key`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokedKeyBody {
    pub id: String,
    pub status: String,
    pub already_revoked: bool,
}

/// `svc_ops_redeem_coupon`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CouponReceiptBody {
    pub coupon_code: String,
    pub credit_cents: i64,
    /// `user` or `org`.
    pub redeemed_by_principal_type: String,
    pub redeemed_by_principal_id: String,
    pub activated_at: String,
}

/// `{ kind: 'llm', generator, model }` or `{ kind: 'user' }`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BlueprintSourceBody {
    Llm { generator: String, model: String },
    User,
}

/// `svc_ops_generate_blueprint` and `svc_ops_register_blueprint`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredBlueprintBody {
    pub blueprint_id: String,
    pub code_hash: String,
    pub source: BlueprintSourceBody,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validator_score: Option<f64>,
}

/// A `Blueprint` row of `svc_ops_list_blueprints` (fields: docs/ops.md).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintRowBody {
    pub blueprint_id: String,
    pub contract_hash: String,
    pub variant_key: String,
    pub code_hash: String,
    pub generator: String,
    pub source: BlueprintSourceBody,
    pub is_operator_default: bool,
    pub variance: Value,
    pub contract: Value,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aesthetic: Option<String>,
    /// Example props the component renders with, when stored (our field: the console previews
    /// a blueprint with them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixture_props: Option<Value>,
    /// Whether a compiled module is stored, so the blueprint can be mounted (a registered
    /// component that did not compile cannot).
    pub mountable: bool,
}

/// `svc_ops_list_blueprints`: one page, oldest first; `nextCursor` names the page's last row and
/// is absent on the last page.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintsResult {
    pub blueprints: Vec<BlueprintRowBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `svc_ops_update_blueprint`
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintUpdatedBody {
    pub blueprint_id: String,
    pub updated_at: String,
}

/// Document 3's ProviderKeySummary: never the key, only its last four characters.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKeySummaryBody {
    pub provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub last_four: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

/// `svc_ops_list_provider_keys`
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProviderKeysResult {
    pub keys: Vec<ProviderKeySummaryBody>,
}

/// `svc_ops_remove_provider_key`: `deleted` is false when there was none.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RemovedProviderKeyBody {
    pub deleted: bool,
    pub provider: String,
}

/// Document 3's credit wallet.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditWalletBody {
    pub balance_cents: i64,
    pub lifetime_granted_cents: i64,
    pub lifetime_spent_cents: i64,
    pub updated_at: String,
}

/// Document 3's credit transaction.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditTransactionBody {
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

/// `svc_ops_list_credit_transactions`: newest first; `nextCursor` names the page's last row.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditTransactionsResult {
    pub transactions: Vec<CreditTransactionBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
