//! `svc_ops_list_orgs`

use svc_protocol::NoArgs;
use svc_protocol::ops_results::{OrgMembershipBody, OrgsResult};

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListOrgs;

impl ToolDefinition for ListOrgs {
    const NAME: &'static str = "svc_ops_list_orgs";
    const DESCRIPTION: &'static str = "List the orgs the caller belongs to, with the caller's role.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = OrgsResult;
}

impl OpsTool for ListOrgs {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<OrgsResult>, ToolFailure> {
        let memberships = ctx.orgs()?.list_orgs(ctx.owner()).await.map_err(|e| e.failure())?;
        let orgs = memberships
            .iter()
            .map(|m| OrgMembershipBody {
                org_id: m.org_id.clone(),
                name: m.name.as_str().to_owned(),
                owner_user_id: m.owner_user_id.clone(),
                role: m.role.as_str().to_owned(),
                joined_at: iso(m.joined_at),
            })
            .collect();
        Answer::json(OrgsResult { orgs })
    }
}
