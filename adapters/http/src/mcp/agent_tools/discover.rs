//! `svc_discover` (Document 1): offered by hosted deployments only.

use svc_protocol::NoArgs;
use svc_protocol::agent_results::DiscoverResult;

use super::super::discover::discover;
use super::{AgentCtx, AgentTool};
use crate::errors::ToolFailure;
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct Discover;

impl ToolDefinition for Discover {
    const NAME: &'static str = "svc_discover";
    const DESCRIPTION: &'static str = "Hosted deployments: the protocol revision, content, shell and adapter types, component capabilities, and the caller's app settings.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = DiscoverResult;
}

impl AgentTool for Discover {
    async fn call(ctx: &AgentCtx<'_>, input: NoArgs) -> Result<Answer<DiscoverResult>, ToolFailure> {
        // `offered_when` lists and dispatches the tool only with the hosted plane wired.
        let Some(apps) = &ctx.state.hosted_apps else {
            return Err(crate::errors::ErrorKind::Internal.failure(&format!("{} without the hosted plane", Self::NAME)));
        };
        let output = discover(apps, ctx.caller, input).await?;
        let text = format!("protocol {}", output.protocol_version);
        Ok(Answer::ok(output, text))
    }
}
