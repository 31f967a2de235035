//! `svc_emit`: push a payload on a declared stream channel.

use svc_protocol::EmitArgs;
use svc_protocol::agent_results::EmitResult;

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct Emit;

impl ToolDefinition for Emit {
    const NAME: &'static str = "svc_emit";
    const DESCRIPTION: &'static str = "Push a payload on a stream channel declared in the contract's streamSpec.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = EmitArgs;
    type Output = EmitResult;
}

impl AgentTool for Emit {
    async fn call(ctx: &AgentCtx<'_>, a: EmitArgs) -> Result<Answer<EmitResult>, ToolFailure> {
        let accepted = ctx
            .state
            .agent
            .emit(
                ctx.caller,
                &a.session_id,
                &a.channel,
                a.payload,
                a.complete.unwrap_or(false),
            )
            .await
            .map_err(map_agent_error)?;
        Ok(Answer::ok(EmitResult { accepted }, "accepted"))
    }
}
