//! `svc_ops_update_blueprint`: make it the operator default and/or merge into its variance.

use svc_application::services::operator::UpdateBlueprint as UpdateBlueprintCommand;
use svc_protocol::ops_results::BlueprintUpdatedBody;
use svc_protocol::ops_tools::UpdateBlueprintArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct UpdateBlueprint;

impl ToolDefinition for UpdateBlueprint {
    const NAME: &'static str = "svc_ops_update_blueprint";
    const DESCRIPTION: &'static str = "Make a blueprint the operator default for its contract, and/or merge fields into its variance (an empty string clears a field).";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = UpdateBlueprintArgs;
    type Output = BlueprintUpdatedBody;
}

impl OpsTool for UpdateBlueprint {
    async fn call(ctx: &OpsCtx<'_>, a: UpdateBlueprintArgs) -> Result<Answer<BlueprintUpdatedBody>, ToolFailure> {
        let command = UpdateBlueprintCommand {
            blueprint_id: a.blueprint_id.clone(),
            make_operator_default: a.is_operator_default.is_some(),
            variance: a.variance.map(|patch| patch.0),
        };
        let updated_at = ctx
            .blueprints()?
            .update(ctx.caller.caller.app_id.as_str(), command)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(BlueprintUpdatedBody {
            blueprint_id: a.blueprint_id,
            updated_at: iso(updated_at),
        })
    }
}
