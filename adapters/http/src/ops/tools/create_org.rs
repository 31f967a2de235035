//! `svc_ops_create_org`: owned by the caller, with an empty credit wallet.

use svc_application::services::operator::CreateOrg as CreateOrgCommand;
use svc_protocol::ops_results::OrgBody;
use svc_protocol::ops_tools::CreateOrgArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct CreateOrg;

impl ToolDefinition for CreateOrg {
    const NAME: &'static str = "svc_ops_create_org";
    const DESCRIPTION: &'static str = "Create an org owned by the caller, with an empty credit wallet.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = CreateOrgArgs;
    type Output = OrgBody;
}

impl OpsTool for CreateOrg {
    async fn call(ctx: &OpsCtx<'_>, a: CreateOrgArgs) -> Result<Answer<OrgBody>, ToolFailure> {
        let command = CreateOrgCommand {
            caller_user_id: ctx.owner().to_owned(),
            name: a.name,
        };
        let org = ctx.orgs()?.create_org(command).await.map_err(|e| e.failure())?;
        Answer::json(OrgBody {
            org_id: org.org_id,
            name: org.name.as_str().to_owned(),
            owner_user_id: org.owner_user_id,
            created_at: iso(org.created_at),
            updated_at: iso(org.updated_at),
        })
    }
}
