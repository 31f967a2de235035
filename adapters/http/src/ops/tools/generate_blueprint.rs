//! `svc_ops_generate_blueprint`: generate a component for a contract into the caller's app's
//! blueprint cache.

use serde_json::Value;
use svc_protocol::ops_results::StoredBlueprintBody;
use svc_protocol::ops_tools::GenerateBlueprintArgs;

use svc_application::services::operator::BlueprintOptions;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct GenerateBlueprint;

impl ToolDefinition for GenerateBlueprint {
    const NAME: &'static str = "svc_ops_generate_blueprint";
    const DESCRIPTION: &'static str = "Generate a component for a DataContract with a generator (default: the deployment's) and store it in the caller's app's blueprint cache.";
    // Generation may call a language model provider.
    const ANNOTATIONS: Annotations = Annotations::CREATE.open_world();
    type Input = GenerateBlueprintArgs;
    type Output = StoredBlueprintBody;
}

impl OpsTool for GenerateBlueprint {
    async fn call(ctx: &OpsCtx<'_>, a: GenerateBlueprintArgs) -> Result<Answer<StoredBlueprintBody>, ToolFailure> {
        let app_id = ctx.caller.caller.app_id.as_str();
        let stored = ctx
            .blueprints()?
            .generate(
                app_id,
                Value::Object(a.contract.0),
                BlueprintOptions {
                    // Hosted: the generation uses its payer's provider keys (an org app's: the
                    // org's), as a render of this caller would.
                    for_caller: Some(ctx.caller.caller.clone()),
                    ..bodies::blueprint_options(a.options)
                },
            )
            .await
            .map_err(|e| e.failure())?;
        let record = &stored.record;
        Answer::json(StoredBlueprintBody {
            blueprint_id: record.blueprint_id.clone(),
            code_hash: record.code_hash.clone(),
            source: bodies::blueprint_source(record.source_kind, &record.generator, record.model.as_deref()),
            validator_score: stored.validator_score,
        })
    }
}
