//! `svc_ops_invite_to_org`: emails the invitee (a pending invite is reused without a second one).

use svc_application::services::operator::InviteToOrg as InviteToOrgCommand;
use svc_protocol::ops_results::InviteBody;
use svc_protocol::ops_tools::InviteToOrgArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct InviteToOrg;

impl ToolDefinition for InviteToOrg {
    const NAME: &'static str = "svc_ops_invite_to_org";
    const DESCRIPTION: &'static str = "Invite an email address to an org the caller owns or administers, as admin or member. A pending invite for the same address is reused without a second email.";
    // Sends an email; a second call reuses the pending invite.
    const ANNOTATIONS: Annotations = Annotations::SET.open_world();
    type Input = InviteToOrgArgs;
    type Output = InviteBody;
}

impl OpsTool for InviteToOrg {
    async fn call(ctx: &OpsCtx<'_>, a: InviteToOrgArgs) -> Result<Answer<InviteBody>, ToolFailure> {
        let command = InviteToOrgCommand {
            caller_user_id: ctx.owner().to_owned(),
            org_id: a.org_id,
            email: a.email,
            role: a.role.as_str().to_owned(),
        };
        let issued = ctx.orgs()?.invite_to_org(command).await.map_err(|e| e.failure())?;
        let invite = issued.invite;
        Answer::json(InviteBody {
            invite_id: invite.invite_id,
            org_id: invite.org_id,
            email: invite.email.as_str().to_owned(),
            role: invite.role.as_str().to_owned(),
            inviter_user_id: invite.inviter_user_id,
            status: invite.status.as_str().to_owned(),
            expires_at: iso(invite.expires_at),
            created_at: iso(invite.created_at),
            accepted_at: invite.accepted_at.map(iso),
            accepted_by_user_id: invite.accepted_by_user_id,
            revoked_at: invite.revoked_at.map(iso),
            reused: issued.reused,
        })
    }
}
