//! `svc_ops_list_blueprints`: every filter given must hold; a page at a time, oldest first,
//! `limit` 1 to 100 (default 20). `nextCursor` is opaque: it names the page's last row, so rows
//! stored meanwhile never shift a page. A cursor or limit we did not hand out is -32602.

use svc_application::ports::blueprints::BlueprintListing;
use svc_application::services::operator::ListBlueprints as ListBlueprintsQuery;
use svc_protocol::ops_results::{BlueprintRowBody, BlueprintsResult};
use svc_protocol::ops_tools::ListBlueprintsArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListBlueprints;

impl ToolDefinition for ListBlueprints {
    const NAME: &'static str = "svc_ops_list_blueprints";
    const DESCRIPTION: &'static str = "List the caller's app's blueprints, oldest first: limit 1-100 (default 20), cursor from the previous page's nextCursor. Filters AND-compose; persona and intentKeywords match by meaning.";
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
            limit: a.limit,
            cursor: a.cursor,
        };
        let page = ctx
            .blueprints()?
            .list(ctx.caller.caller.app_id.as_str(), query)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(BlueprintsResult {
            blueprints: page.blueprints.into_iter().map(row).collect(),
            next_cursor: page.next_cursor,
        })
    }
}

/// A `Blueprint` row (fields: docs/ops.md).
fn row(listed: BlueprintListing) -> BlueprintRowBody {
    BlueprintRowBody {
        source: bodies::blueprint_source(listed.source_kind, &listed.generator, listed.model.as_deref()),
        contract: listed.contract.as_value(),
        created_at: iso(listed.created_at),
        updated_at: iso(listed.updated_at),
        intent: Some(listed.intent).filter(|i| !i.is_empty()),
        mountable: listed.servable,
        blueprint_id: listed.blueprint_id,
        contract_hash: listed.contract_hash,
        variant_key: listed.variant_key,
        code_hash: listed.code_hash,
        generator: listed.generator,
        is_operator_default: listed.is_operator_default,
        variance: listed.variance,
        description: listed.description,
        persona: listed.persona,
        aesthetic: listed.aesthetic,
        fixture_props: listed.fixture_props,
    }
}
