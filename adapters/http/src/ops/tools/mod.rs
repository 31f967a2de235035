//! The operator tools of Document 3 for a self-hosted server: one file per tool, one line per
//! tool in [`OPS_TOOLS`], each tagged with the domain that wires it. Provider keys and credits
//! are wired by hosted deployments only; a self-hosted server lists none of their tools.

mod bodies;
mod create_app;
mod create_org;
mod delete_app;
mod delete_blueprint;
mod generate_blueprint;
mod get_credit_balance;
mod invite_to_org;
mod issue_connector_key;
mod list_apps;
mod list_blueprints;
mod list_connector_keys;
mod list_credit_transactions;
mod list_orgs;
mod list_provider_keys;
mod redeem_coupon;
mod register_blueprint;
mod remove_provider_key;
mod rename_app;
mod revoke_connector_key;
mod revoke_invite;
mod set_default_app;
mod set_provider_key;
mod update_app_system_prompt;
mod update_blueprint;

use std::future::Future;
use std::pin::Pin;
use std::sync::{LazyLock, OnceLock};

use serde_json::{Value, json};
use svc_application::services::apps::AppService;
use svc_application::services::hosted::ProviderKeyService;
use svc_application::services::operator::{
    CouponService, CreditService, OpsBlueprintService, OrgService, OrgServiceError,
};
use svc_domain::org::OrgError;
use svc_domain::wallet::Principal;

use super::{OpsCaller, OpsConnectorKeys, OpsDomains, method_not_found};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Answer, Declared, ToolDefinition, parse_arguments};

/// What an operator tool runs with.
pub struct OpsCtx<'r> {
    pub domains: &'r OpsDomains,
    pub caller: &'r OpsCaller,
}

/// An operator tool's handler.
pub trait OpsTool: ToolDefinition {
    fn call(
        ctx: &OpsCtx<'_>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Answer<Self::Output>, ToolFailure>> + Send;
}

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

impl OpsDomain {
    pub const ALL: [Self; 7] = [
        Self::Apps,
        Self::Orgs,
        Self::ConnectorKeys,
        Self::Coupons,
        Self::Blueprints,
        Self::ProviderKeys,
        Self::Credits,
    ];
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

type Outcome = Result<Value, ToolFailure>;
type Handler = for<'a, 'r> fn(&'a OpsCtx<'r>, Value) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

pub struct OpsToolEntry {
    pub domain: OpsDomain,
    pub declared: Declared,
    pub for_locked_key: ForLockedKey,
    handler: Handler,
}

impl OpsToolEntry {
    pub fn name(&self) -> &'static str {
        self.declared.name
    }

    pub fn visible_to(&self, app_locked: bool) -> bool {
        !app_locked || self.for_locked_key == ForLockedKey::OwnApp
    }

    pub async fn call(&self, ctx: &OpsCtx<'_>, arguments: Value) -> Outcome {
        (self.handler)(ctx, arguments).await
    }
}

fn run<'a, 'r, T: OpsTool>(
    ctx: &'a OpsCtx<'r>,
    arguments: Value,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>> {
    Box::pin(async move {
        let input = parse_arguments::<T::Input>(arguments)?;
        T::call(ctx, input).await?.into_result()
    })
}

fn tool<T: OpsTool>(domain: OpsDomain) -> OpsToolEntry {
    // Every domain but connector keys and blueprints reaches beyond one app.
    let for_locked_key = match domain {
        OpsDomain::ConnectorKeys | OpsDomain::Blueprints => ForLockedKey::OwnApp,
        OpsDomain::Apps | OpsDomain::Orgs | OpsDomain::Coupons | OpsDomain::ProviderKeys | OpsDomain::Credits => {
            ForLockedKey::Hidden
        }
    };
    OpsToolEntry {
        domain,
        declared: Declared::of::<T>(),
        for_locked_key,
        handler: run::<T>,
    }
}

/// An apps tool that acts on one app named by `appId`, which a locked key may aim at its own app.
fn own_app_tool<T: OpsTool>() -> OpsToolEntry {
    OpsToolEntry {
        for_locked_key: ForLockedKey::OwnApp,
        ..tool::<T>(OpsDomain::Apps)
    }
}

pub static OPS_TOOLS: LazyLock<Vec<OpsToolEntry>> = LazyLock::new(|| {
    use OpsDomain::*;
    vec![
        tool::<list_apps::ListApps>(Apps),
        tool::<create_app::CreateApp>(Apps),
        own_app_tool::<rename_app::RenameApp>(),
        tool::<delete_app::DeleteApp>(Apps),
        tool::<set_default_app::SetDefaultApp>(Apps),
        own_app_tool::<update_app_system_prompt::UpdateAppSystemPrompt>(),
        tool::<list_orgs::ListOrgs>(Orgs),
        tool::<create_org::CreateOrg>(Orgs),
        tool::<invite_to_org::InviteToOrg>(Orgs),
        tool::<revoke_invite::RevokeInvite>(Orgs),
        tool::<list_connector_keys::ListConnectorKeys>(ConnectorKeys),
        tool::<issue_connector_key::IssueConnectorKey>(ConnectorKeys),
        tool::<revoke_connector_key::RevokeConnectorKey>(ConnectorKeys),
        tool::<redeem_coupon::RedeemCoupon>(Coupons),
        tool::<generate_blueprint::GenerateBlueprint>(Blueprints),
        tool::<register_blueprint::RegisterBlueprint>(Blueprints),
        tool::<list_blueprints::ListBlueprints>(Blueprints),
        tool::<update_blueprint::UpdateBlueprint>(Blueprints),
        tool::<delete_blueprint::DeleteBlueprint>(Blueprints),
        tool::<set_provider_key::SetProviderKey>(ProviderKeys),
        tool::<list_provider_keys::ListProviderKeys>(ProviderKeys),
        tool::<remove_provider_key::RemoveProviderKey>(ProviderKeys),
        tool::<get_credit_balance::GetCreditBalance>(Credits),
        tool::<list_credit_transactions::ListCreditTransactions>(Credits),
    ]
});

/// The name of the tool of that name on any server, if there is one (a bounded metrics label).
pub fn known(name: &str) -> Option<&'static str> {
    OPS_TOOLS.iter().map(OpsToolEntry::name).find(|known| *known == name)
}

/// The tools this caller sees: wired domains only, and for a locked key only those scoped to
/// its app.
pub fn visible(domains: &OpsDomains, app_locked: bool) -> impl Iterator<Item = &'static OpsToolEntry> + '_ {
    OPS_TOOLS
        .iter()
        .filter(move |t| domains.wired(t.domain))
        .filter(move |t| t.visible_to(app_locked))
}

/// The `tools/list` result, built once per set of wired domains and key scope.
pub fn list(domains: &OpsDomains, app_locked: bool) -> bytes::Bytes {
    // One slot per set of wired domains and key scope: 2^7 sets, two scopes; serialized once.
    static LISTS: [OnceLock<bytes::Bytes>; 256] = [const { OnceLock::new() }; 256];
    let wired = OpsDomain::ALL
        .iter()
        .enumerate()
        .filter(|(_, d)| domains.wired(**d))
        .fold(0, |bits, (i, _)| bits | (1 << i));
    let slot = wired * 2 + usize::from(app_locked);
    LISTS[slot]
        .get_or_init(|| {
            let tools: Vec<Value> = visible(domains, app_locked).map(|t| t.declared.declaration()).collect();
            bytes::Bytes::from(json!({ "tools": tools }).to_string())
        })
        .clone()
}

/// `visible` let only wired domains' tools through, so a handler finds its service; a missing
/// one answers like an unknown method.
fn unwired() -> ToolFailure {
    ToolFailure::Rpc(method_not_found("tools/call"))
}

impl OpsCtx<'_> {
    fn apps(&self) -> Result<&AppService, ToolFailure> {
        self.domains.apps.as_ref().ok_or_else(unwired)
    }

    fn orgs(&self) -> Result<&OrgService, ToolFailure> {
        self.domains.orgs.as_ref().ok_or_else(unwired)
    }

    fn connector_keys(&self) -> Result<&OpsConnectorKeys, ToolFailure> {
        self.domains.connector_keys.as_ref().ok_or_else(unwired)
    }

    fn coupons(&self) -> Result<&CouponService, ToolFailure> {
        self.domains.coupons.as_ref().ok_or_else(unwired)
    }

    fn blueprints(&self) -> Result<&OpsBlueprintService, ToolFailure> {
        self.domains.blueprints.as_ref().ok_or_else(unwired)
    }

    fn provider_keys(&self) -> Result<&ProviderKeyService, ToolFailure> {
        self.domains.provider_keys.as_ref().ok_or_else(unwired)
    }

    fn credits(&self) -> Result<&CreditService, ToolFailure> {
        self.domains.credits.as_deref().ok_or_else(unwired)
    }

    /// Whose wallet and provider keys the hosted tools act on: the caller's user id, else its
    /// app id (Document 3, "Authentication").
    fn payer(&self) -> Principal {
        Principal::user(self.caller.identity.clone())
    }

    /// The orgs domain for a tool of another domain that names an `orgId`: where orgs are off
    /// (`[ops] orgs = false`) there is no org to name, so `org_not_found`, not an unknown method.
    fn orgs_for_org_id(&self) -> Result<&OrgService, ToolFailure> {
        self.domains
            .orgs
            .as_ref()
            .ok_or_else(|| OrgServiceError::from(OrgError::NotFound).failure())
    }

    /// The wallet a credit tool reads: the org's of `org_id` when the caller is a member of it
    /// (`org_not_found` otherwise, a missing org alike), else the caller's.
    async fn wallet_owner(&self, org_id: Option<String>) -> Result<Principal, ToolFailure> {
        let Some(org_id) = org_id else {
            return Ok(self.payer());
        };
        self.orgs_for_org_id()?
            .ensure_member(&org_id, self.owner())
            .await
            .map_err(|e| e.failure())?;
        Ok(Principal::org(org_id))
    }

    /// The provider keys a set or remove changes: the org's of `org_id` when the caller is an
    /// owner or admin of it (`org_not_found` outside it, `org_invite_access_denied` for a plain
    /// member), else the caller's. Listing reads them like a wallet: [`Self::wallet_owner`].
    async fn key_owner(&self, org_id: Option<String>) -> Result<Principal, ToolFailure> {
        let Some(org_id) = org_id else {
            return Ok(self.payer());
        };
        self.orgs_for_org_id()?
            .ensure_administers(&org_id, self.owner())
            .await
            .map_err(|e| e.failure())?;
        Ok(Principal::org(org_id))
    }

    /// The owner of every row the tool reads or writes.
    fn owner(&self) -> &str {
        &self.caller.identity
    }
}

impl AsRef<Declared> for OpsToolEntry {
    fn as_ref(&self) -> &Declared {
        &self.declared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(name: &str) -> &'static Declared {
        &OPS_TOOLS.iter().find(|t| t.name() == name).unwrap().declared
    }

    #[test]
    fn every_schema_is_an_object_schema_and_names_are_unique() {
        let mut names: Vec<&str> = OPS_TOOLS.iter().map(|t| t.name()).collect();
        for tool in OPS_TOOLS.iter() {
            assert_eq!(tool.declared.input_schema["type"], "object", "{}", tool.name());
            assert_eq!(tool.declared.output_schema["type"], "object", "{}", tool.name());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 24);
    }

    /// Names are 1 to 120 characters once trimmed (`svc_domain::name`, the one place the rule
    /// lives): a schema that counted the raw string would refuse a name the rule accepts.
    #[test]
    fn name_schemas_accept_every_name_the_trimmed_rule_accepts() {
        let padded = format!("  {}\t ", "é".repeat(120));
        for (tool, arguments) in [
            (create_app::CreateApp::NAME, json!({ "displayName": padded })),
            (
                rename_app::RenameApp::NAME,
                json!({ "appId": "a", "displayName": padded }),
            ),
            (create_org::CreateOrg::NAME, json!({ "name": padded })),
            (issue_connector_key::IssueConnectorKey::NAME, json!({ "name": padded })),
            (
                set_provider_key::SetProviderKey::NAME,
                json!({ "provider": "openai", "plaintextKey": "k", "label": padded }),
            ),
        ] {
            let checked = find(tool).check_arguments(&arguments);
            assert!(checked.is_ok(), "{tool}: {checked:?}");
        }
    }

    #[test]
    fn limits_are_in_the_schemas() {
        let prompt = find(update_app_system_prompt::UpdateAppSystemPrompt::NAME);
        let err = prompt
            .check_arguments(&json!({ "appId": "a", "systemPrompt": "x".repeat(10_001) }))
            .unwrap_err();
        assert!(err.starts_with("systemPrompt: "), "{err}");
        let redeem = find(redeem_coupon::RedeemCoupon::NAME);
        assert!(redeem.check_arguments(&json!({ "couponCode": "cpn_AbCd1234" })).is_ok());
        for bad in ["cpn_AbCd123", "cpn_AbCd12345", "CPN_AbCd1234", "cpn_AbCd-234"] {
            let err = redeem.check_arguments(&json!({ "couponCode": bad })).unwrap_err();
            assert!(err.starts_with("couponCode: "), "{bad}: {err}");
        }
        let invite = find(invite_to_org::InviteToOrg::NAME);
        let err = invite
            .check_arguments(&json!({ "orgId": "o", "email": "a@b.c", "role": "owner" }))
            .unwrap_err();
        assert!(err.starts_with("role: "), "{err}");
    }

    /// The operator's blueprint texts are refused by the schema, in characters, naming the field
    /// (`svc_domain::blueprint::operator_texts` holds the numbers).
    #[test]
    fn blueprint_texts_and_listing_pages_are_bounded_in_the_schemas() {
        for (tool, mut arguments) in [
            (
                register_blueprint::RegisterBlueprint::NAME,
                json!({ "contract": {}, "componentCode": "x" }),
            ),
            (generate_blueprint::GenerateBlueprint::NAME, json!({ "contract": {} })),
        ] {
            for (field, max) in [
                ("persona", 200),
                ("aesthetic", 200),
                ("context", 4_000),
                ("seedPrompt", 10_000),
            ] {
                arguments[field] = json!("é".repeat(max));
                let checked = find(tool).check_arguments(&arguments);
                assert!(checked.is_ok(), "{tool} {field}: {checked:?}");
                arguments[field] = json!("é".repeat(max + 1));
                let err = find(tool).check_arguments(&arguments).unwrap_err();
                assert!(
                    err.starts_with(&format!("{field}: "))
                        && err.ends_with(&format!("is longer than {max} characters")),
                    "{tool}: {err}"
                );
                arguments[field] = json!("");
            }
        }
        let list = find(list_blueprints::ListBlueprints::NAME);
        assert!(list.check_arguments(&json!({ "limit": 100, "cursor": "c" })).is_ok());
        for limit in [0, 101] {
            let err = list.check_arguments(&json!({ "limit": limit })).unwrap_err();
            assert!(err.starts_with("limit: "), "{err}");
        }
    }

    /// Each filter of the listing and the update's variance are bounded where they arrive, each
    /// refusal naming its field (`svc_domain::blueprint::listing_filters` and `variance_patch`
    /// hold the numbers).
    #[test]
    fn listing_filters_and_variance_patches_are_bounded_in_the_schemas() {
        // A refused value is quoted as an excerpt of its JSON.
        let quoted = |text: String| svc_domain::text::excerpt(&json!(text).to_string()).into_owned();
        let list = find(list_blueprints::ListBlueprints::NAME);
        let words: Vec<String> = (0..20).map(|i| format!("{}{i:02}", "é".repeat(198))).collect();
        let at_the_caps = json!({
            "contractHash": "a".repeat(64),
            "generator": "g".repeat(64),
            "persona": "é".repeat(200),
            "intentKeywords": words,
            "cursor": "c".repeat(512),
        });
        assert_eq!(list.check_arguments(&at_the_caps), Ok(()));
        let mut too_many = words.clone();
        too_many.push("one more".into());
        for (arguments, expected) in [
            (
                json!({ "contractHash": "a".repeat(65) }),
                format!("contractHash: \"{}\" is longer than 64 characters", "a".repeat(65)),
            ),
            (
                json!({ "generator": "g".repeat(65) }),
                format!("generator: \"{}\" is longer than 64 characters", "g".repeat(65)),
            ),
            (
                json!({ "intentKeywords": ["ok", "w".repeat(201)] }),
                format!(
                    "intentKeywords.1: {} is longer than 200 characters",
                    quoted("w".repeat(201))
                ),
            ),
        ] {
            assert_eq!(list.check_arguments(&arguments), Err(expected));
        }
        for (arguments, field, rule) in [
            (
                json!({ "persona": "é".repeat(201) }),
                "persona",
                "is longer than 200 characters",
            ),
            (
                json!({ "intentKeywords": too_many }),
                "intentKeywords",
                "has more than 20 items",
            ),
            (
                json!({ "cursor": "c".repeat(513) }),
                "cursor",
                "is longer than 512 characters",
            ),
        ] {
            let err = list.check_arguments(&arguments).unwrap_err();
            assert!(err.starts_with(&format!("{field}: ")) && err.ends_with(rule), "{err}");
        }

        let update = find(update_blueprint::UpdateBlueprint::NAME);
        let fields: serde_json::Map<String, Value> = (0..32)
            .map(|i| (format!("{}{i:02}", "n".repeat(62)), json!("é".repeat(200))))
            .collect();
        let checked = update.check_arguments(&json!({ "blueprintId": "b", "variance": fields }));
        assert_eq!(checked, Ok(()));
        let numbers_and_flags = json!({ "blueprintId": "b", "variance": { "columns": 3, "dense": true, "tone": "" } });
        assert_eq!(update.check_arguments(&numbers_and_flags), Ok(()));
        let mut too_many = fields.clone();
        too_many.insert("one more".into(), json!("x"));
        for (variance, expected) in [
            (
                json!({ "tone": "é".repeat(201) }),
                format!(
                    "variance.tone: {} is longer than 200 characters",
                    quoted("é".repeat(201))
                ),
            ),
            (
                json!({ "layout": { "nested": "document" } }),
                "variance.layout: {\"nested\":\"document\"} is not of types \"boolean\", \"number\", \"string\""
                    .to_owned(),
            ),
            (
                json!({ "axes": ["a", "b"] }),
                "variance.axes: [\"a\",\"b\"] is not of types \"boolean\", \"number\", \"string\"".to_owned(),
            ),
        ] {
            let err = update.check_arguments(&json!({ "blueprintId": "b", "variance": variance }));
            assert_eq!(err, Err(expected));
        }
        for (variance, rule) in [
            (Value::Object(too_many), "has more than 32 properties"),
            (json!({ "n".repeat(65): "x" }), "is longer than 64 characters"),
        ] {
            let err = update
                .check_arguments(&json!({ "blueprintId": "b", "variance": variance }))
                .unwrap_err();
            assert!(err.starts_with("variance: ") && err.ends_with(rule), "{err}");
        }
    }
}
