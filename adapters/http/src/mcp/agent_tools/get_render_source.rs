//! `svc_get_render_source`: the TSX, contract and live props behind a render.

use svc_protocol::SessionIdArgs;
use svc_protocol::agent_results::{RenderSourceBlueprint, RenderSourceResult};

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct GetRenderSource;

impl ToolDefinition for GetRenderSource {
    const NAME: &'static str = "svc_get_render_source";
    const DESCRIPTION: &'static str = "Read the TSX source, contract and live props behind a render.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = SessionIdArgs;
    type Output = RenderSourceResult;
}

impl AgentTool for GetRenderSource {
    async fn call(ctx: &AgentCtx<'_>, a: SessionIdArgs) -> Result<Answer<RenderSourceResult>, ToolFailure> {
        let s = ctx
            .state
            .agent
            .get_render_source(ctx.caller, &a.session_id)
            .await
            .map_err(map_agent_error)?;
        let body = RenderSourceResult {
            session_id: s.session_id,
            blueprint: RenderSourceBlueprint {
                source: s.source,
                contract: s.contract.into(),
                fixture_props: s.fixture_props,
            },
        };
        Ok(Answer::ok(body, "render source attached"))
    }
}
