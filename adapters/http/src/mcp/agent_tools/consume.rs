//! `svc_consume`: drain the user's gestures on a card, long-polling for the first one.

use svc_protocol::ConsumeArgs;
use svc_protocol::agent_results::{ActionEventBody, ConsumeResult};

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition, iso};

pub struct Consume;

impl ToolDefinition for Consume {
    const NAME: &'static str = "svc_consume";
    const DESCRIPTION: &'static str = "Drain the user's gestures on a rendered card. Long-polls up to `timeout` seconds (0 to 25) for the first one; re-call on an empty result until `status` is expired.";
    // Draining: a second call does not see the same gestures again.
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = ConsumeArgs;
    type Output = ConsumeResult;
}

impl AgentTool for Consume {
    async fn call(ctx: &AgentCtx<'_>, a: ConsumeArgs) -> Result<Answer<ConsumeResult>, ToolFailure> {
        let timeout = a.timeout.unwrap_or(0);
        let _waiting = (timeout > 0).then(|| crate::observe::held(&crate::observe::METRICS.consume_waits));
        let reply = ctx
            .state
            .agent
            .consume(ctx.caller, &a.session_id, timeout)
            .await
            .map_err(map_agent_error)?;
        let events: Vec<ActionEventBody> = reply
            .events
            .into_iter()
            .map(|e| ActionEventBody {
                kind: "action".to_owned(),
                session_id: e.session_id,
                intent: e.intent,
                action_data: e.action_data,
                ui_context: e.ui_context,
                action_id: e.action_id,
                fired_at: iso(e.fired_at),
            })
            .collect();
        let text = format!("{} event(s); session {}", events.len(), reply.status.as_str());
        let body = ConsumeResult {
            events,
            status: reply.status.as_str().to_owned(),
            client: reply.client,
        };
        Ok(Answer::ok(body, text))
    }
}
