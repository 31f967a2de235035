//! The operator tools of Document 3 for a self-hosted server, each tagged with the domain that
//! wires it. Schemas come from the argument types of `svc_protocol::ops_tools`, exactly as on
//! `/mcp`. Provider keys and credits are wired by hosted deployments only.

use std::sync::LazyLock;

use svc_protocol::NoArgs;
use svc_protocol::ops_tools::*;

use super::hosted::list_credit_transactions::ListCreditTransactionsArgs;
use super::hosted::remove_provider_key::RemoveProviderKeyArgs;
use super::hosted::set_provider_key::SetProviderKeyArgs;
use crate::mcp::tool_table::{ToolSpec, spec};

/// A domain of `/ops`, wired by one server option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpsDomain {
    Apps,
    Orgs,
    ConnectorKeys,
    Coupons,
    Blueprints,
    /// Hosted only.
    ProviderKeys,
    /// Hosted only.
    Credits,
}

/// What a key locked to one app may do with a tool (docs/ops.md, "Keys locked to an app").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForLockedKey {
    /// The tool reaches beyond one app (the owner's other apps, orgs, wallets): absent from the
    /// key's `tools/list` and -32602 `unknown tool` when called.
    Hidden,
    /// The tool acts on the key's own app only; another app answers like a missing one.
    OwnApp,
}

pub struct OpsTool {
    pub domain: OpsDomain,
    pub spec: ToolSpec,
    pub for_locked_key: ForLockedKey,
}

impl OpsTool {
    pub fn visible_to(&self, app_locked: bool) -> bool {
        !app_locked || self.for_locked_key == ForLockedKey::OwnApp
    }
}

fn tool(domain: OpsDomain, spec: ToolSpec) -> OpsTool {
    // Every domain but the app's own tools and blueprints reaches beyond one app.
    let for_locked_key = match domain {
        OpsDomain::ConnectorKeys | OpsDomain::Blueprints => ForLockedKey::OwnApp,
        OpsDomain::Apps | OpsDomain::Orgs | OpsDomain::Coupons | OpsDomain::ProviderKeys | OpsDomain::Credits => {
            ForLockedKey::Hidden
        }
    };
    OpsTool {
        domain,
        spec,
        for_locked_key,
    }
}

/// An apps tool that acts on one app named by `appId`, which a locked key may aim at its own app.
fn own_app_tool(spec: ToolSpec) -> OpsTool {
    OpsTool {
        for_locked_key: ForLockedKey::OwnApp,
        ..tool(OpsDomain::Apps, spec)
    }
}

pub static OPS_TOOLS: LazyLock<Vec<OpsTool>> = LazyLock::new(|| {
    use OpsDomain::*;
    vec![
        tool(
            Apps,
            spec::<NoArgs>("svc_ops_list_apps", "List the caller's apps, oldest first."),
        ),
        tool(
            Apps,
            spec::<CreateAppArgs>(
                "svc_ops_create_app",
                "Create an app (the tenancy unit of sessions and blueprints). The server mints its id.",
            ),
        ),
        own_app_tool(spec::<RenameAppArgs>(
            "svc_ops_rename_app",
            "Rename one of the caller's apps.",
        )),
        tool(
            Apps,
            spec::<AppIdArgs>(
                "svc_ops_delete_app",
                "Delete one of the caller's apps. Idempotent: a missing id also answers deleted.",
            ),
        ),
        tool(
            Apps,
            spec::<AppIdArgs>(
                "svc_ops_set_default_app",
                "Make one of the caller's apps the default that universal keys are scoped to.",
            ),
        ),
        own_app_tool(spec::<UpdateAppSystemPromptArgs>(
            "svc_ops_update_app_system_prompt",
            "Set the app's system prompt, appended to the agent instructions on /mcp initialize. An empty string clears it.",
        )),
        tool(
            Orgs,
            spec::<NoArgs>(
                "svc_ops_list_orgs",
                "List the orgs the caller belongs to, with the caller's role.",
            ),
        ),
        tool(
            Orgs,
            spec::<CreateOrgArgs>(
                "svc_ops_create_org",
                "Create an org owned by the caller, with an empty credit wallet.",
            ),
        ),
        tool(
            Orgs,
            spec::<InviteToOrgArgs>(
                "svc_ops_invite_to_org",
                "Invite an email address to an org the caller owns or administers, as admin or member. A pending invite for the same address is reused without a second email.",
            ),
        ),
        tool(
            Orgs,
            spec::<RevokeInviteArgs>(
                "svc_ops_revoke_invite",
                "Revoke a pending invite of an org the caller administers; revoking twice answers alreadyRevoked.",
            ),
        ),
        tool(
            ConnectorKeys,
            spec::<NoArgs>(
                "svc_ops_list_connector_keys",
                "List the caller's connector keys: metadata only, never the secret.",
            ),
        ),
        tool(
            ConnectorKeys,
            spec::<IssueConnectorKeyArgs>(
                "svc_ops_issue_connector_key",
                "Issue a svc_user_ bearer key. plaintextKey is shown only in this result; store it now.",
            ),
        ),
        tool(
            ConnectorKeys,
            spec::<RevokeConnectorKeyArgs>(
                "svc_ops_revoke_connector_key",
                "Revoke one of the caller's connector keys by id; it stops authenticating at once.",
            ),
        ),
        tool(
            Coupons,
            spec::<RedeemCouponArgs>(
                "svc_ops_redeem_coupon",
                "Redeem a one-time coupon into the caller's credit wallet, or into an org's the caller belongs to.",
            ),
        ),
        tool(
            Blueprints,
            spec::<GenerateBlueprintArgs>(
                "svc_ops_generate_blueprint",
                "Generate a component for a DataContract with a generator (default: the deployment's) and store it in the caller's app's blueprint cache.",
            ),
        ),
        tool(
            Blueprints,
            spec::<RegisterBlueprintArgs>(
                "svc_ops_register_blueprint",
                "Store your own TSX component for a DataContract in the caller's app's blueprint cache, as given: nothing is generated or validated.",
            ),
        ),
        tool(
            Blueprints,
            spec::<ListBlueprintsArgs>(
                "svc_ops_list_blueprints",
                "List the caller's app's blueprints. Filters AND-compose; persona and intentKeywords match by meaning.",
            ),
        ),
        tool(
            Blueprints,
            spec::<UpdateBlueprintArgs>(
                "svc_ops_update_blueprint",
                "Make a blueprint the operator default for its contract, and/or merge fields into its variance (an empty string clears a field).",
            ),
        ),
        tool(
            Blueprints,
            spec::<BlueprintIdArgs>(
                "svc_ops_delete_blueprint",
                "Delete one of the caller's app's blueprints. Idempotent: a missing id also answers deleted.",
            ),
        ),
        tool(
            ProviderKeys,
            spec::<SetProviderKeyArgs>(
                "svc_ops_set_provider_key",
                "Store your own API key for a language-model provider; your generations use it. Stored encrypted, never shown again (summarised by lastFour); setting again rotates.",
            ),
        ),
        tool(
            ProviderKeys,
            spec::<NoArgs>(
                "svc_ops_list_provider_keys",
                "List your provider keys: provider, label, lastFour, createdAt, lastUsedAt; never the key.",
            ),
        ),
        tool(
            ProviderKeys,
            spec::<RemoveProviderKeyArgs>(
                "svc_ops_remove_provider_key",
                "Remove your key for a provider. Idempotent: deleted is false when there was none.",
            ),
        ),
        tool(
            Credits,
            spec::<NoArgs>(
                "svc_ops_get_credit_balance",
                "Your credit wallet: balanceCents, lifetimeGrantedCents, lifetimeSpentCents, updatedAt.",
            ),
        ),
        tool(
            Credits,
            spec::<ListCreditTransactionsArgs>(
                "svc_ops_list_credit_transactions",
                "Your credit transactions, newest first: limit 1-100 (default 20), then pass nextCursor for the next page.",
            ),
        ),
    ]
});

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::tool_table::check_arguments;

    fn find(name: &str) -> &'static ToolSpec {
        &OPS_TOOLS.iter().find(|t| t.spec.name == name).unwrap().spec
    }

    #[test]
    fn every_schema_is_an_object_schema_and_names_are_unique() {
        let mut names: Vec<&str> = OPS_TOOLS.iter().map(|t| t.spec.name).collect();
        for tool in OPS_TOOLS.iter() {
            assert_eq!(tool.spec.input_schema["type"], "object", "{}", tool.spec.name);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 24, "Document 3's 24 tools");
    }

    #[test]
    fn limits_are_in_the_schemas() {
        let create = find("svc_ops_create_app");
        assert!(check_arguments(create, &json!({ "displayName": "x".repeat(120) })).is_ok());
        let err = check_arguments(create, &json!({ "displayName": "x".repeat(121) })).unwrap_err();
        assert!(err.starts_with("displayName: "), "{err}");
        let err = check_arguments(create, &json!({ "displayName": "" })).unwrap_err();
        assert!(err.starts_with("displayName: "), "{err}");
        let prompt = find("svc_ops_update_app_system_prompt");
        let err = check_arguments(prompt, &json!({ "appId": "a", "systemPrompt": "x".repeat(10_001) })).unwrap_err();
        assert!(err.starts_with("systemPrompt: "), "{err}");
        let redeem = find("svc_ops_redeem_coupon");
        assert!(check_arguments(redeem, &json!({ "couponCode": "cpn_AbCd1234" })).is_ok());
        for bad in ["cpn_AbCd123", "cpn_AbCd12345", "CPN_AbCd1234", "cpn_AbCd-234"] {
            let err = check_arguments(redeem, &json!({ "couponCode": bad })).unwrap_err();
            assert!(err.starts_with("couponCode: "), "{bad}: {err}");
        }
        let invite = find("svc_ops_invite_to_org");
        let err = check_arguments(invite, &json!({ "orgId": "o", "email": "a@b.c", "role": "owner" })).unwrap_err();
        assert!(err.starts_with("role: "), "{err}");
    }
}
