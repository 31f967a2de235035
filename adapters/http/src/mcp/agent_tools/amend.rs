//! `svc_amend`: repaint the mounted card in place.

use svc_protocol::UpdateArgs;
use svc_protocol::agent_results::UpdateResult;

use super::update::change_props;
use super::{AgentCtx, AgentTool};
use crate::errors::ToolFailure;
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct Amend;

impl ToolDefinition for Amend {
    const NAME: &'static str = "svc_amend";
    const DESCRIPTION: &'static str = "Repaint the mounted card in place with new props; no new card, same epoch.";
    // The previous props of the epoch are replaced, not kept in the history.
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = UpdateArgs;
    type Output = UpdateResult;
}

impl AgentTool for Amend {
    async fn call(ctx: &AgentCtx<'_>, a: UpdateArgs) -> Result<Answer<UpdateResult>, ToolFailure> {
        change_props(ctx, a, Self::NAME, true).await
    }
}
