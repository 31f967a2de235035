//! `svc_ops_set_default_app`

use svc_protocol::ops_results::DefaultAppResult;
use svc_protocol::ops_tools::AppIdArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct SetDefaultApp;

impl ToolDefinition for SetDefaultApp {
    const NAME: &'static str = "svc_ops_set_default_app";
    const DESCRIPTION: &'static str = "Make one of the caller's apps the default that universal keys are scoped to.";
    const ANNOTATIONS: Annotations = Annotations::SET;
    type Input = AppIdArgs;
    type Output = DefaultAppResult;
}

impl OpsTool for SetDefaultApp {
    async fn call(ctx: &OpsCtx<'_>, a: AppIdArgs) -> Result<Answer<DefaultAppResult>, ToolFailure> {
        let default_app_id = ctx
            .apps()?
            .set_default(ctx.owner(), &a.app_id)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(DefaultAppResult { default_app_id })
    }
}
