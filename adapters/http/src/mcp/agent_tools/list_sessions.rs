//! `svc_list_sessions`: the app's renders, newest last, with a wsToken for each active one where
//! this server mints them.

use svc_application::ports::agent::SessionQuery;
use svc_domain::session::SessionStatus;
use svc_protocol::ListSessionsArgs;
use svc_protocol::agent_results::{SessionRow, SessionsResult};

use super::{AgentCtx, AgentTool, mints_ws_tokens};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct ListSessions;

impl ToolDefinition for ListSessions {
    const NAME: &'static str = "svc_list_sessions";
    const DESCRIPTION: &'static str = "List the app's renders, newest last, optionally for one host conversation.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = ListSessionsArgs;
    type Output = SessionsResult;
}

impl AgentTool for ListSessions {
    async fn call(ctx: &AgentCtx<'_>, a: ListSessionsArgs) -> Result<Answer<SessionsResult>, ToolFailure> {
        let query = SessionQuery {
            host_name: a.host_name,
            host_session_id: a.host_session_id,
            limit: a.limit.unwrap_or(0),
        };
        let rows = ctx
            .state
            .agent
            .list_sessions(ctx.caller, query)
            .await
            .map_err(map_agent_error)?;
        let now = ctx.state.agent.now();
        let minting = mints_ws_tokens(ctx.state);
        let sessions: Vec<SessionRow> = rows
            .iter()
            .map(|(s, status)| {
                // A host re-mounting a card from its history subscribes with this; a session
                // that can no longer be subscribed to gets none, and nor does any session on a
                // server without the live channel's bootstrap.
                let token = (minting && *status == SessionStatus::Active).then(|| {
                    ctx.state
                        .tokens
                        .mint(&s.session_id, &s.app_id, ctx.caller.key_id.as_deref(), now)
                });
                SessionRow {
                    session_id: s.session_id.clone(),
                    created_at: iso(s.created_at),
                    last_activity_at: iso(s.last_activity_at),
                    status: status.as_str().to_owned(),
                    host_name: s.host.host_name.clone(),
                    host_session_id: s.host.host_session_id.clone(),
                    ws_token_expires_at: token.as_ref().map(|(_, expires_at)| iso(*expires_at)),
                    ws_token: token.map(|(token, _)| token),
                }
            })
            .collect();
        let text = format!("{} session(s)", sessions.len());
        Ok(Answer::ok(SessionsResult { sessions }, text))
    }
}
