//! `svc_ops_list_orgs`

use svc_domain::invite::Invite;
use svc_protocol::NoArgs;
use svc_protocol::ops_results::{OrgInviteBody, OrgMembershipBody, OrgsResult};

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListOrgs;

impl ToolDefinition for ListOrgs {
    const NAME: &'static str = "svc_ops_list_orgs";
    const DESCRIPTION: &'static str = "List the orgs the caller belongs to, with the caller's role; an org the caller administers lists its invites too.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = OrgsResult;
}

impl OpsTool for ListOrgs {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<OrgsResult>, ToolFailure> {
        let orgs_service = ctx.orgs()?;
        let memberships = orgs_service.list_orgs(ctx.owner()).await.map_err(|e| e.failure())?;
        let mut orgs = Vec::with_capacity(memberships.len());
        for m in &memberships {
            let invites = if m.role.administers() {
                let invites = orgs_service
                    .invites_of(&m.org_id, ctx.owner())
                    .await
                    .map_err(|e| e.failure())?;
                Some(invites.iter().map(invite_row).collect())
            } else {
                None
            };
            orgs.push(OrgMembershipBody {
                org_id: m.org_id.clone(),
                name: m.name.as_str().to_owned(),
                owner_user_id: m.owner_user_id.clone(),
                role: m.role.as_str().to_owned(),
                joined_at: iso(m.joined_at),
                invites,
            });
        }
        Answer::json(OrgsResult { orgs })
    }
}

fn invite_row(invite: &Invite) -> OrgInviteBody {
    OrgInviteBody {
        invite_id: invite.invite_id.clone(),
        email: invite.email.as_str().to_owned(),
        role: invite.role.as_str().to_owned(),
        inviter_user_id: invite.inviter_user_id.clone(),
        status: invite.status.as_str().to_owned(),
        expires_at: iso(invite.expires_at),
        created_at: iso(invite.created_at),
        accepted_at: invite.accepted_at.map(iso),
        revoked_at: invite.revoked_at.map(iso),
    }
}
