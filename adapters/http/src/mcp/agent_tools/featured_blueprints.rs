//! `svc_list_featured_blueprints`: starting points, manifest UIs and cached components.

use svc_application::services::blueprints::BlueprintEntry;
use svc_protocol::NoArgs;
use svc_protocol::agent_results::{BlueprintEntryBody, FeaturedBlueprintsResult};

use super::{AgentCtx, AgentTool};
use crate::errors::ToolFailure;
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct FeaturedBlueprints;

impl ToolDefinition for FeaturedBlueprints {
    const NAME: &'static str = "svc_list_featured_blueprints";
    const DESCRIPTION: &'static str =
        "List the featured blueprints (manifest UIs and cached components) as starting points.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = FeaturedBlueprintsResult;
}

impl AgentTool for FeaturedBlueprints {
    async fn call(ctx: &AgentCtx<'_>, _: NoArgs) -> Result<Answer<FeaturedBlueprintsResult>, ToolFailure> {
        let blueprints: Vec<BlueprintEntryBody> = ctx
            .state
            .agent
            .featured_blueprints(ctx.caller)
            .await
            .iter()
            .map(blueprint_entry)
            .collect();
        let text = format!("{} featured blueprint(s)", blueprints.len());
        let body = FeaturedBlueprintsResult {
            total: blueprints.len(),
            blueprints,
        };
        Ok(Answer::ok(body, text))
    }
}

/// A BlueprintEntry row of the blueprint tools.
pub(super) fn blueprint_entry(e: &BlueprintEntry) -> BlueprintEntryBody {
    BlueprintEntryBody {
        id: e.id.clone(),
        name: e.name.clone(),
        description: e.description.clone(),
        category: e.category.clone(),
        props: e.props.clone(),
        callbacks: e.callbacks.clone(),
        featured: e.featured,
    }
}
