//! `svc_ops_revoke_invite`: revoking twice answers `alreadyRevoked`.

use svc_application::services::operator::RevokeInvite as RevokeInviteCommand;
use svc_protocol::ops_results::InviteRevokedBody;
use svc_protocol::ops_tools::RevokeInviteArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RevokeInvite;

impl ToolDefinition for RevokeInvite {
    const NAME: &'static str = "svc_ops_revoke_invite";
    const DESCRIPTION: &'static str =
        "Revoke a pending invite of an org the caller administers; revoking twice answers alreadyRevoked.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = RevokeInviteArgs;
    type Output = InviteRevokedBody;
}

impl OpsTool for RevokeInvite {
    async fn call(ctx: &OpsCtx<'_>, a: RevokeInviteArgs) -> Result<Answer<InviteRevokedBody>, ToolFailure> {
        let command = RevokeInviteCommand {
            caller_user_id: ctx.owner().to_owned(),
            invite_id: a.invite_id,
        };
        let revoked = ctx.orgs()?.revoke_invite(command).await.map_err(|e| e.failure())?;
        Answer::json(InviteRevokedBody {
            invite_id: revoked.invite_id,
            status: revoked.status.as_str().to_owned(),
            already_revoked: revoked.already_revoked,
        })
    }
}
