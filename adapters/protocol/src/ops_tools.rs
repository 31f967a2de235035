//! Arguments of the operator tools of `/ops` (Document 3). Each type is what the handler
//! deserialises and what `tools/list` publishes as the tool's `inputSchema`, so the limits below
//! are checked before a tool runs and a violation is answered with -32602 naming the field.
//! Tools without arguments use [`crate::NoArgs`].

use schemars::JsonSchema;
use serde::Deserialize;

/// `svc_ops_create_app`. The app id is minted by the server; an `appId` sent here is ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateAppArgs {
    /// 1 to 120 characters; default `My app`.
    #[schemars(length(min = 1, max = 120))]
    pub display_name: Option<String>,
}

/// `svc_ops_rename_app`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameAppArgs {
    pub app_id: String,
    /// 1 to 120 characters.
    #[schemars(length(min = 1, max = 120))]
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
    /// 1 to 120 characters.
    #[schemars(length(min = 1, max = 120))]
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
    /// 1 to 120 characters.
    #[schemars(length(min = 1, max = 120))]
    pub name: Option<String>,
    /// Locks the key to this app (one of the caller's); absent: a universal key scoped per
    /// request to the caller's default app.
    pub app_id: Option<String>,
    /// ISO 8601 date-time with an offset; from then on the key no longer authenticates.
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
