//! `svc_runtime_sync_context` (app-visible): store the card's contextSpec slot values.

use serde_json::Value;
use svc_protocol::SyncContextArgs;
use svc_protocol::agent_results::SyncContextResult;

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct SyncContext;

impl ToolDefinition for SyncContext {
    const NAME: &'static str = "svc_runtime_sync_context";
    const DESCRIPTION: &'static str = "Runtime: store the card's contextSpec slot values.";
    // The stored snapshot is replaced by the declared slots sent.
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = SyncContextArgs;
    type Output = SyncContextResult;
}

impl AgentTool for SyncContext {
    async fn call(ctx: &AgentCtx<'_>, a: SyncContextArgs) -> Result<Answer<SyncContextResult>, ToolFailure> {
        let context_snapshot = ctx
            .state
            .agent
            .sync_context(ctx.caller, &a.session_id, Value::Object(a.context))
            .await
            .map_err(map_agent_error)?;
        let body = SyncContextResult {
            accepted: true,
            context_snapshot,
        };
        Ok(Answer::ok(body, "context stored"))
    }
}
