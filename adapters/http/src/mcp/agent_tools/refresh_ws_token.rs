//! `svc_runtime_refresh_ws_token` (app-visible): a fresh wsToken for a mounted card's live
//! channel.

use svc_protocol::RefreshWsTokenArgs;
use svc_protocol::agent_results::WsTokenResult;

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct RefreshWsToken;

impl ToolDefinition for RefreshWsToken {
    const NAME: &'static str = "svc_runtime_refresh_ws_token";
    const DESCRIPTION: &'static str = "Runtime: mint a fresh wsToken for a mounted card's live channel.";
    // A token is signed, not stored: minting one changes nothing.
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = RefreshWsTokenArgs;
    type Output = WsTokenResult;
}

impl AgentTool for RefreshWsToken {
    async fn call(ctx: &AgentCtx<'_>, a: RefreshWsTokenArgs) -> Result<Answer<WsTokenResult>, ToolFailure> {
        let session = ctx
            .state
            .agent
            .unexpired_session_for(ctx.caller, &a.session_id)
            .await
            .map_err(map_agent_error)?;
        let (ws_token, expires_at) = ctx.state.tokens.mint(
            &session.session_id,
            &session.app_id,
            ctx.caller.key_id.as_deref(),
            ctx.state.agent.now(),
        );
        let body = WsTokenResult {
            session_id: session.session_id.clone(),
            ws_token,
            expires_at: iso(expires_at),
        };
        Ok(Answer::ok(body, "wsToken refreshed"))
    }
}
