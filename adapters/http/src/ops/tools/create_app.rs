//! `svc_ops_create_app`: the server mints the app id.

use svc_application::services::apps::CreateApp as CreateAppCommand;
use svc_protocol::ops_results::AppBody;
use svc_protocol::ops_tools::CreateAppArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct CreateApp;

impl ToolDefinition for CreateApp {
    const NAME: &'static str = "svc_ops_create_app";
    const DESCRIPTION: &'static str =
        "Create an app (the tenancy unit of sessions and blueprints). The server mints its id.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = CreateAppArgs;
    type Output = AppBody;
}

impl OpsTool for CreateApp {
    async fn call(ctx: &OpsCtx<'_>, a: CreateAppArgs) -> Result<Answer<AppBody>, ToolFailure> {
        let command = CreateAppCommand {
            owner_id: ctx.owner().to_owned(),
            display_name: a.display_name,
        };
        let created = ctx.apps()?.create(command).await.map_err(|e| e.failure())?;
        Answer::json(bodies::app(&created))
    }
}
