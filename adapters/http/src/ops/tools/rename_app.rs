//! `svc_ops_rename_app`: a key locked to an app renames only its own app.

use svc_application::services::apps::RenameApp as RenameAppCommand;
use svc_protocol::ops_results::AppBody;
use svc_protocol::ops_tools::RenameAppArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RenameApp;

impl ToolDefinition for RenameApp {
    const NAME: &'static str = "svc_ops_rename_app";
    const DESCRIPTION: &'static str = "Rename one of the caller's apps.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = RenameAppArgs;
    type Output = AppBody;
}

impl OpsTool for RenameApp {
    async fn call(ctx: &OpsCtx<'_>, a: RenameAppArgs) -> Result<Answer<AppBody>, ToolFailure> {
        ctx.caller.ensure_reaches_app(&a.app_id).map_err(|e| e.failure())?;
        let command = RenameAppCommand {
            owner_id: ctx.owner().to_owned(),
            app_id: a.app_id,
            display_name: a.display_name,
        };
        let renamed = ctx.apps()?.rename(command).await.map_err(|e| e.failure())?;
        Answer::json(bodies::app(&renamed))
    }
}
