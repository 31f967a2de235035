//! `svc_render`: render a card from a handshake. A failed or refused render is an error result
//! with the same typed body.

use serde_json::{Value, json};
use svc_application::ports::agent::HostSession;
use svc_application::services::agent::{Refusal, RenderCommand, RenderIdentity, RenderOverride, RenderResult};
use svc_domain::refusal::RefusalCode;
use svc_protocol::RenderArgs;
use svc_protocol::agent_results::{
    CacheBody, ErrorBody, HandshakeState, NextStep, RefusalBody, RenderFailed, RenderFailureCode, RenderGateCode,
    RenderIdentityBody, RenderOutcome, RenderRefused, Rendered,
};

use super::consume::Consume;
use super::{AgentCtx, AgentTool, mints_ws_tokens, render_uri};
use crate::errors::{ToolFailure, map_agent_error};
use crate::mcp::render_meta::render_meta;
use crate::tools::{Annotations, Answer, ToolDefinition, serialisation_failure};

pub struct Render;

impl ToolDefinition for Render {
    const NAME: &'static str = "svc_render";
    const DESCRIPTION: &'static str = "Render a UI card from a handshake. Read `outcome` first: rendered (a card and its ui:// resource), failed (generation produced nothing) or refused (nothing ran; follow refusal.fix).";
    // A render may call a language model provider.
    const ANNOTATIONS: Annotations = Annotations::CREATE.open_world();
    type Input = RenderArgs;
    type Output = RenderOutcome;
}

impl AgentTool for Render {
    async fn call(ctx: &AgentCtx<'_>, a: RenderArgs) -> Result<Answer<RenderOutcome>, ToolFailure> {
        let cmd = RenderCommand {
            handshake_id: a.handshake_id,
            props: Value::Object(a.props),
            theme_id: a.theme_id,
            model: a.infra.and_then(|i| i.model),
            override_: a.override_.map(|o| RenderOverride {
                contract: o.contract.map(|c| Value::Object(c.0)),
                variance: o.variance.map(|v| Value::Object(v.0)),
            }),
            ttl_seconds: a.ttl_seconds,
            host: host_session(ctx.meta),
            origin: Some(ctx.origin),
            progress: crate::mcp::progress_stream::current_observer(),
        };
        let result = ctx.state.agent.render(ctx.caller, cmd).await.map_err(map_agent_error)?;
        count_render(&result);
        answer(ctx, &result)
    }
}

/// `_meta['ai.svc/host-session']` of the request, captured for `svc_list_sessions`.
fn host_session(meta: &Value) -> HostSession {
    let pair = &meta["ai.svc/host-session"];
    HostSession {
        host_name: pair["hostName"].as_str().map(str::to_owned),
        host_session_id: pair["hostSessionId"].as_str().map(str::to_owned),
    }
}

fn answer(ctx: &AgentCtx<'_>, result: &RenderResult) -> Result<Answer<RenderOutcome>, ToolFailure> {
    match result {
        RenderResult::Rendered {
            identity,
            has_actions,
            theme_id,
            last_sequence,
            first_paint,
            ..
        } => {
            let uri = render_uri(&identity.session_id);
            let body = Rendered {
                identity: identity_body(identity),
                resource_uri: uri.clone(),
                next_step: has_actions.then(|| NextStep {
                    tool: Consume::NAME.to_owned(),
                    example: json!({ "sessionId": identity.session_id, "timeout": 10 }),
                }),
            };
            // A person without an MCP-Apps host at hand sees the card on the playground page.
            let text = match &ctx.state.playground_url {
                Some(page) => format!("rendered: {uri} (see it at {page}#{})", identity.session_id),
                None => format!("rendered: {uri}"),
            };
            let answer = Answer::ok(RenderOutcome::Rendered(body), text);
            // The mount bootstrap (with its wsToken) is MCP-Apps metadata: without the option
            // there is none. The option needs the live channel, the token's seam.
            if ctx.state.mcp_apps_on() {
                debug_assert!(mints_ws_tokens(ctx.state), "MCP-Apps is on only with the live channel");
                let key_id = ctx.caller.key_id.as_deref();
                let meta = render_meta(ctx.state, identity, theme_id, *last_sequence, first_paint, key_id)
                    .map_err(serialisation_failure)?;
                Ok(answer.with_serialized_meta(meta))
            } else {
                Ok(answer)
            }
        }
        RenderResult::Failed {
            identity,
            code,
            message,
        } => {
            let body = RenderFailed {
                identity: identity_body(identity),
                error: ErrorBody {
                    code: RenderFailureCode::of(code),
                    message: message.clone(),
                },
            };
            Ok(Answer::error(
                RenderOutcome::Failed(body),
                format!("render failed ({code}): {message}"),
            ))
        }
        RenderResult::Refused(refusal) => {
            let body = RenderRefused {
                refusal: RefusalBody {
                    code: render_gate_code(refusal)?,
                    message: refusal.message.clone(),
                    fix: refusal.entry.fix.to_owned(),
                    retry: refusal.entry.retry.into(),
                    handshake: HandshakeState::Intact,
                    balance_cents_at_check: refusal.balance_cents_at_check,
                },
            };
            Ok(Answer::error(
                RenderOutcome::Refused(body),
                format!("render refused ({}): {}", refusal.entry.code, refusal.entry.fix),
            ))
        }
    }
}

/// The refusal's registry row as the render gate's wire code. A row outside the gate's subset
/// never refuses a render: reaching here with one is a server fault, never sent as a refusal.
fn render_gate_code(refusal: &Refusal) -> Result<RenderGateCode, ToolFailure> {
    RefusalCode::ALL
        .into_iter()
        .find(|code| code.entry() == refusal.entry)
        .and_then(|code| RenderGateCode::try_from(code).ok())
        .ok_or_else(|| {
            let cause = format!(
                "a render was refused with `{}`, outside the render gate",
                refusal.entry.code
            );
            ToolFailure::Rpc(crate::errors::internal(&cause))
        })
}

fn identity_body(identity: &RenderIdentity) -> RenderIdentityBody {
    let c = &identity.cache;
    RenderIdentityBody {
        session_id: identity.session_id.clone(),
        action: identity.action.into(),
        contract_hash: identity.contract_hash.clone(),
        blueprint_id: identity.blueprint_id.clone(),
        variant_key: identity.variant_key.clone(),
        cache: CacheBody {
            hit: c.hit,
            llm_calls_avoided: c.llm_calls_avoided,
            similarity: c.similarity,
            cached_blueprint_id: c.cached_blueprint_id.clone(),
            kind: c.kind.clone(),
            reason: c.reason.clone(),
        },
    }
}

/// `svc_renders_total{outcome, cache}`: how renders end, and how many a cached blueprint served.
fn count_render(result: &RenderResult) {
    let (outcome, cache) = match result {
        RenderResult::Rendered { identity, .. } => ("rendered", if identity.cache.hit { "hit" } else { "miss" }),
        RenderResult::Failed { .. } => ("failed", "miss"),
        RenderResult::Refused(_) => ("refused", "none"),
    };
    crate::observe::METRICS
        .renders
        .with_label_values(&[outcome, cache])
        .inc();
}
