//! `svc_ops_update_app_system_prompt`: a key locked to an app sets only its own app's prompt.

use svc_application::services::apps::SetAppSystemPrompt;
use svc_protocol::ops_results::AppBody;
use svc_protocol::ops_tools::UpdateAppSystemPromptArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct UpdateAppSystemPrompt;

impl ToolDefinition for UpdateAppSystemPrompt {
    const NAME: &'static str = "svc_ops_update_app_system_prompt";
    const DESCRIPTION: &'static str = "Set the app's system prompt, appended to the agent instructions on /mcp initialize. An empty string clears it.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = UpdateAppSystemPromptArgs;
    type Output = AppBody;
}

impl OpsTool for UpdateAppSystemPrompt {
    async fn call(ctx: &OpsCtx<'_>, a: UpdateAppSystemPromptArgs) -> Result<Answer<AppBody>, ToolFailure> {
        ctx.caller.ensure_reaches_app(&a.app_id).map_err(|e| e.failure())?;
        let command = SetAppSystemPrompt {
            owner_id: ctx.owner().to_owned(),
            app_id: a.app_id,
            system_prompt: a.system_prompt,
        };
        let app = ctx.apps()?.set_system_prompt(command).await.map_err(|e| e.failure())?;
        Answer::json(bodies::app(&app))
    }
}
