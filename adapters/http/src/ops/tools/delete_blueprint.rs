//! `svc_ops_delete_blueprint`: idempotent.

use svc_protocol::ops_results::DeletedResult;
use svc_protocol::ops_tools::BlueprintIdArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct DeleteBlueprint;

impl ToolDefinition for DeleteBlueprint {
    const NAME: &'static str = "svc_ops_delete_blueprint";
    const DESCRIPTION: &'static str =
        "Delete one of the caller's app's blueprints. Idempotent: a missing id also answers deleted.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = BlueprintIdArgs;
    type Output = DeletedResult;
}

impl OpsTool for DeleteBlueprint {
    async fn call(ctx: &OpsCtx<'_>, a: BlueprintIdArgs) -> Result<Answer<DeletedResult>, ToolFailure> {
        ctx.blueprints()?
            .delete(ctx.caller.caller.app_id.as_str(), &a.blueprint_id)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(DeletedResult { deleted: true })
    }
}
