//! The orgs domain: `svc_ops_list_orgs`, `_create_org`, `_invite_to_org`, `_revoke_invite`.

use serde_json::{Value, json};
use svc_application::services::operator::{CreateOrg, InviteToOrg, OrgService, RevokeInvite};
use svc_protocol::NoArgs;
use svc_protocol::ops_tools::{CreateOrgArgs, InviteToOrgArgs, RevokeInviteArgs};

use super::OpsCaller;
use super::errors::tool_failure;
use super::wire::{ok, record};
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

pub async fn call(orgs: &OrgService, caller: &OpsCaller, name: &str, arguments: Value) -> Result<Value, ToolFailure> {
    let user = caller.identity.clone();
    match name {
        "svc_ops_list_orgs" => {
            let _: NoArgs = args(arguments)?;
            let memberships = orgs.list_orgs(&user).await.map_err(tool_failure)?;
            ok(json!({ "orgs": record(&memberships)? }))
        }
        "svc_ops_create_org" => {
            let a: CreateOrgArgs = args(arguments)?;
            let command = CreateOrg {
                caller_user_id: user,
                name: a.name,
            };
            ok(record(&orgs.create_org(command).await.map_err(tool_failure)?)?)
        }
        "svc_ops_invite_to_org" => {
            let a: InviteToOrgArgs = args(arguments)?;
            let command = InviteToOrg {
                caller_user_id: user,
                org_id: a.org_id,
                email: a.email,
                role: a.role.as_str().to_owned(),
            };
            ok(record(&orgs.invite_to_org(command).await.map_err(tool_failure)?)?)
        }
        "svc_ops_revoke_invite" => {
            let a: RevokeInviteArgs = args(arguments)?;
            let command = RevokeInvite {
                caller_user_id: user,
                invite_id: a.invite_id,
            };
            ok(record(&orgs.revoke_invite(command).await.map_err(tool_failure)?)?)
        }
        other => unreachable!("{other} is not an orgs tool"),
    }
}
