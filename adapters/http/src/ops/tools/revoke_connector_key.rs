//! `svc_ops_revoke_connector_key`: a key locked to an app revokes only its app's keys.

use svc_application::services::operator::RevokeConnectorKey as RevokeConnectorKeyCommand;
use svc_protocol::ops_results::RevokedKeyBody;
use svc_protocol::ops_tools::RevokeConnectorKeyArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RevokeConnectorKey;

impl ToolDefinition for RevokeConnectorKey {
    const NAME: &'static str = "svc_ops_revoke_connector_key";
    const DESCRIPTION: &'static str =
        "Revoke one of the caller's connector keys by id; it stops authenticating at once.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = RevokeConnectorKeyArgs;
    type Output = RevokedKeyBody;
}

impl OpsTool for RevokeConnectorKey {
    async fn call(ctx: &OpsCtx<'_>, a: RevokeConnectorKeyArgs) -> Result<Answer<RevokedKeyBody>, ToolFailure> {
        let command = RevokeConnectorKeyCommand {
            caller_user_id: ctx.owner().to_owned(),
            caller_locked_app: ctx.caller.locked_app().map(str::to_owned),
            key_id: a.key_id,
        };
        let revoked = ctx
            .connector_keys()?
            .keys
            .revoke(command)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(RevokedKeyBody {
            id: revoked.id,
            status: revoked.status.as_str().to_owned(),
            already_revoked: revoked.already_revoked,
        })
    }
}
