//! `svc_ops_register_blueprint`: store the caller's own component as given.

use serde_json::Value;
use svc_protocol::ops_results::{BlueprintSourceBody, StoredBlueprintBody};
use svc_protocol::ops_tools::RegisterBlueprintArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RegisterBlueprint;

impl ToolDefinition for RegisterBlueprint {
    const NAME: &'static str = "svc_ops_register_blueprint";
    const DESCRIPTION: &'static str = "Store your own TSX component for a DataContract in the caller's app's blueprint cache, as given: nothing is generated or validated.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = RegisterBlueprintArgs;
    type Output = StoredBlueprintBody;
}

impl OpsTool for RegisterBlueprint {
    async fn call(ctx: &OpsCtx<'_>, a: RegisterBlueprintArgs) -> Result<Answer<StoredBlueprintBody>, ToolFailure> {
        let app_id = ctx.caller.caller.app_id.as_str();
        let stored = ctx
            .blueprints()?
            .register(
                app_id,
                Value::Object(a.contract.0),
                a.component_code,
                bodies::blueprint_options(a.options),
            )
            .await
            .map_err(|e| e.failure())?;
        Answer::json(StoredBlueprintBody {
            blueprint_id: stored.record.blueprint_id,
            code_hash: stored.record.code_hash,
            source: BlueprintSourceBody::User,
            validator_score: None,
        })
    }
}
