//! `svc_render_blueprint`: a manifest UI's compiled bundle; offered only with a UI registry.

use svc_protocol::RenderBlueprintArgs;
use svc_protocol::agent_results::RenderBlueprintResult;

use super::featured_blueprints::FeaturedBlueprints;
use super::search_blueprints::SearchBlueprints;
use super::{AgentCtx, AgentTool};
use crate::errors::{ErrorKind, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RenderBlueprint;

impl ToolDefinition for RenderBlueprint {
    const NAME: &'static str = "svc_render_blueprint";
    const DESCRIPTION: &'static str =
        "Fetch a manifest UI's compiled ES-module bundle by its svc.ui.json id; creates no session.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = RenderBlueprintArgs;
    type Output = RenderBlueprintResult;
}

impl AgentTool for RenderBlueprint {
    async fn call(ctx: &AgentCtx<'_>, a: RenderBlueprintArgs) -> Result<Answer<RenderBlueprintResult>, ToolFailure> {
        match ctx.state.agent.render_blueprint(&a.blueprint_id) {
            Some(b) => {
                let text = format!("bundle of {} attached", b.blueprint_id);
                let body = RenderBlueprintResult {
                    blueprint_id: b.blueprint_id,
                    blueprint_name: b.blueprint_name,
                    code: b.code,
                    content_type: b.content_type.to_owned(),
                };
                Ok(Answer::ok(body, text))
            }
            None => Err(ErrorKind::Refusal("blueprint_not_found").failure(&format!(
                "unknown blueprint id `{}`; ids come from {} or {} rows of manifest UIs",
                a.blueprint_id,
                SearchBlueprints::NAME,
                FeaturedBlueprints::NAME,
            ))),
        }
    }
}
