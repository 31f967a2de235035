//! `svc_consume`: drain the user's gestures on a card, long-polling for the first one. A poll that
//! has to wait is answered [`Reply::Later`]: the request's head goes out and only the wait is
//! held, not the handler chain that began it (issue 18: memory per held long-poll).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use svc_application::services::agent::{ConsumeReply, Consumption};
use svc_protocol::ConsumeArgs;
use svc_protocol::agent_results::{ActionEventBody, ConsumeResult};

use super::{AgentCtx, Outcome, into_rpc};
use crate::errors::map_agent_error;
use crate::mcp::jsonrpc::{Later, Reply};
use crate::observe::{METRICS, held};
use crate::tools::{Annotations, Answer, ToolDefinition, iso, parse_arguments};

pub struct Consume;

impl ToolDefinition for Consume {
    const NAME: &'static str = "svc_consume";
    const DESCRIPTION: &'static str = "Drain the user's gestures on a rendered card. Long-polls up to `timeout` seconds (0 to 25) for the first one; re-call on an empty result until `status` is expired.";
    // Draining: a second call does not see the same gestures again.
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = ConsumeArgs;
    type Output = ConsumeResult;
}

/// The handler: every refusal and any stored gesture are answered now; a wait is answered later,
/// or as the server's drain begins (with no gesture: the client polls again).
pub(super) fn answer_held_apart<'a>(
    ctx: &'a AgentCtx<'_>,
    arguments: Value,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>> {
    Box::pin(async move {
        let a = parse_arguments::<ConsumeArgs>(arguments)?;
        let timeout = a.timeout.unwrap_or(0);
        let waiting = (timeout > 0).then(|| held(&METRICS.consume_waits));
        let begun = ctx
            .state
            .agent
            .begin_consume(ctx.caller, &a.session_id, timeout)
            .await
            .map_err(map_agent_error)?;
        match begun {
            Consumption::Ready(reply) => answer(reply).into_reply(),
            Consumption::Waiting(poll) => {
                let drained = ctx.state.held.released();
                Ok(Reply::Later(Later::new(async move {
                    let _waiting = waiting;
                    let finished = poll.finish_unless(drained).await.map_err(map_agent_error);
                    into_rpc(finished.and_then(|reply| answer(reply).into_reply()))
                })))
            }
        }
    })
}

fn answer(reply: ConsumeReply) -> Answer<ConsumeResult> {
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
        status: reply.status.into(),
        client: reply.client,
    };
    Answer::ok(body, text)
}
