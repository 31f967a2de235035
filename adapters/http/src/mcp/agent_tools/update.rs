//! `svc_update`: render new state as a new card in the history (epoch N+1). The props change it
//! shares with `svc_amend` lives here.

use serde_json::Value;
use svc_application::services::agent::PropsChange;
use svc_protocol::agent_results::UpdateResult;
use svc_protocol::{UpdateArgs, UpdateKind};

use super::{AgentCtx, AgentTool, render_uri};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition, invalid};

pub struct Update;

impl ToolDefinition for Update {
    const NAME: &'static str = "svc_update";
    const DESCRIPTION: &'static str = "Render updated state as a new card in the history (epoch N+1). `replace` takes props; `merge` takes an RFC 7396 patch. Equal props are a no-op.";
    const ANNOTATIONS: Annotations = Annotations::SET;
    type Input = UpdateArgs;
    type Output = UpdateResult;
}

impl AgentTool for Update {
    async fn call(ctx: &AgentCtx<'_>, a: UpdateArgs) -> Result<Answer<UpdateResult>, ToolFailure> {
        change_props(ctx, a, Self::NAME, false).await
    }
}

/// Applies the change; `amend` repaints in place instead of adding an epoch.
pub(super) async fn change_props(
    ctx: &AgentCtx<'_>,
    a: UpdateArgs,
    tool: &str,
    amend: bool,
) -> Result<Answer<UpdateResult>, ToolFailure> {
    let change = match a.kind {
        UpdateKind::Replace => PropsChange::Replace(Value::Object(
            a.props
                .ok_or_else(|| invalid("props", "is required when kind is `replace`"))?,
        )),
        UpdateKind::Merge => PropsChange::Merge(Value::Object(
            a.patch
                .ok_or_else(|| invalid("patch", "is required when kind is `merge`"))?,
        )),
    };
    let reply = ctx
        .state
        .agent
        .change_props(ctx.caller, &a.session_id, change, amend)
        .await
        .map_err(map_agent_error)?;
    let (resource_uri, epoch) = if amend {
        (render_uri(&reply.session_id), None)
    } else {
        (
            format!("{}#{}", render_uri(&reply.session_id), reply.epoch),
            Some(reply.epoch),
        )
    };
    let text = if reply.updated {
        format!("{tool}: card updated (epoch {})", reply.epoch)
    } else {
        format!("{tool}: no change")
    };
    let (props_schema_hash, props_schema_profile) = match reply.props_schema {
        Some((hash, profile)) => (Some(hash), Some(profile.as_str().to_owned())),
        None => (None, None),
    };
    let body = UpdateResult {
        session_id: reply.session_id,
        updated: reply.updated,
        resource_uri,
        epoch,
        warning: reply.warning.map(str::to_owned),
        props_schema_hash,
        props_schema_profile,
    };
    Ok(Answer::ok(body, text))
}
