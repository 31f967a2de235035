//! `svc_ops_list_blueprints`: every filter given must hold.

use svc_application::ports::blueprints::BlueprintRecord;
use svc_application::services::operator::ListBlueprints as ListBlueprintsQuery;
use svc_protocol::ops_results::{BlueprintRowBody, BlueprintsResult};
use svc_protocol::ops_tools::ListBlueprintsArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListBlueprints;

impl ToolDefinition for ListBlueprints {
    const NAME: &'static str = "svc_ops_list_blueprints";
    const DESCRIPTION: &'static str =
        "List the caller's app's blueprints. Filters AND-compose; persona and intentKeywords match by meaning.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = ListBlueprintsArgs;
    type Output = BlueprintsResult;
}

impl OpsTool for ListBlueprints {
    async fn call(ctx: &OpsCtx<'_>, a: ListBlueprintsArgs) -> Result<Answer<BlueprintsResult>, ToolFailure> {
        let query = ListBlueprintsQuery {
            contract_hash: a.contract_hash,
            generator: a.generator,
            persona: a.persona,
            intent_keywords: a.intent_keywords.unwrap_or_default(),
        };
        let rows = ctx
            .blueprints()?
            .list(ctx.caller.caller.app_id.as_str(), query)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(BlueprintsResult {
            blueprints: rows.iter().map(row).collect(),
        })
    }
}

/// A `Blueprint` row (fields: docs/ops.md).
fn row(record: &BlueprintRecord) -> BlueprintRowBody {
    BlueprintRowBody {
        blueprint_id: record.blueprint_id.clone(),
        contract_hash: record.contract_hash.clone(),
        variant_key: record.variant_key.clone(),
        code_hash: record.code_hash.clone(),
        generator: record.generator.clone(),
        source: bodies::blueprint_source(record),
        is_operator_default: record.is_operator_default,
        variance: record.variance.clone(),
        contract: record.contract.as_value(),
        created_at: iso(record.created_at),
        updated_at: iso(record.updated_at),
        intent: Some(record.intent.clone()).filter(|i| !i.is_empty()),
        description: record.description.clone(),
        persona: record.persona.clone(),
        aesthetic: record.aesthetic.clone(),
        fixture_props: record.fixture_props.clone(),
        mountable: !record.code.is_empty(),
    }
}
