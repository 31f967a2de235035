//! `svc_ops_delete_app`: idempotent.

use svc_protocol::ops_results::DeletedResult;
use svc_protocol::ops_tools::AppIdArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct DeleteApp;

impl ToolDefinition for DeleteApp {
    const NAME: &'static str = "svc_ops_delete_app";
    const DESCRIPTION: &'static str = "Delete one of the caller's apps. Idempotent: a missing id also answers deleted.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = AppIdArgs;
    type Output = DeletedResult;
}

impl OpsTool for DeleteApp {
    async fn call(ctx: &OpsCtx<'_>, a: AppIdArgs) -> Result<Answer<DeletedResult>, ToolFailure> {
        ctx.apps()?
            .delete(ctx.owner(), &a.app_id)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(DeletedResult { deleted: true })
    }
}
