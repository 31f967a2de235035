//! `svc_get_session`: a render's session record; bumps its activity heartbeat.

use svc_application::services::tool_channels::SESSION_PROJECTION_TOOL;
use svc_protocol::SessionIdArgs;
use svc_protocol::agent_results::SessionResult;

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct GetSession;

impl ToolDefinition for GetSession {
    // The built-in pollable tool channel mirrors this tool under the same name.
    const NAME: &'static str = SESSION_PROJECTION_TOOL;
    const DESCRIPTION: &'static str = "Read a render's session record; bumps its activity heartbeat.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = SessionIdArgs;
    type Output = SessionResult;
}

impl AgentTool for GetSession {
    async fn call(ctx: &AgentCtx<'_>, a: SessionIdArgs) -> Result<Answer<SessionResult>, ToolFailure> {
        let v = ctx
            .state
            .agent
            .get_session(ctx.caller, &a.session_id)
            .await
            .map_err(map_agent_error)?;
        let text = format!("session {} ({})", a.session_id, v.status.as_str());
        let body = SessionResult {
            variant: v.variant.as_str().to_owned(),
            id: v.session_id,
            app_id: v.app_id,
            event_sequence: v.event_sequence,
            created_at: v.created_at.timestamp_millis(),
            last_activity_at: v.last_activity_at.timestamp_millis(),
            expires_at: v.expires_at.timestamp_millis(),
            // Only a `render` variant has one (Document 1).
            context_snapshot: v
                .context_snapshot
                .filter(|c| c.as_object().is_some_and(|m| !m.is_empty())),
        };
        Ok(Answer::ok(body, text))
    }
}
